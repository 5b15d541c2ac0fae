package mobile

import (
	"os"
	"strings"
	"testing"
)

// TestREADMESetup: mobile/README.md says how to get the library into an
// app, not only how to call it, and both READMEs install gomobile one
// way, the pinned one tools/go.mod holds.
func TestREADMESetup(t *testing.T) {
	read := func(path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	mobile, root, tools := read("README.md"), read("../README.md"), read("../tools/go.mod")
	for _, want := range []string{
		`implementation(files("libs/settee.aar"))`,            // the .aar in Gradle
		"android.permission.INTERNET",                         // the network permission
		"cleartextTrafficPermitted", "NSAppTransportSecurity", // cleartext HTTP, both platforms
		"--ca-file", "10.0.2.2", "--addr 0.0.0.0:5984", // a LAN hub, loopback
		"(cd tools && GOWORK=off go install tool)",
	} {
		if !strings.Contains(mobile, want) {
			t.Errorf("mobile/README.md does not say %q", want)
		}
	}
	for name, text := range map[string]string{"README.md": root, "mobile/README.md": mobile} {
		if strings.Contains(text, "go install golang.org/x/mobile") {
			t.Errorf("%s installs gomobile another way than tools/go.mod's", name)
		}
	}
	if !strings.Contains(tools, "golang.org/x/mobile/cmd/gomobile") {
		t.Error("tools/go.mod no longer pins gomobile")
	}
}
