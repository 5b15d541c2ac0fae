package localdb_test

import (
	"encoding/base64"
	"errors"
)

func asErr(err error, target any) bool { return errors.As(err, target) }

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
