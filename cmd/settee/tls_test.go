package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// selfSigned writes a self-signed certificate for 127.0.0.1 and its key.
func selfSigned(t testing.TB, dir string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "settee test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

func TestTLS(t *testing.T) {
	dir := t.TempDir()
	cert, key := selfSigned(t, dir)
	store := filepath.Join(dir, "tls.db")
	ok(t, "put", store, "a", `{}`)
	root := serveBinary(t, store, nil, "--tls-cert", cert, "--tls-key", key)
	dbURL := strings.Replace(root, "http://", "https://", 1) + "/tls"

	r := cli(t, nil, "pull", "--retries", "0", filepath.Join(dir, "x.db"), dbURL)
	failsWith(t, r, exitUnreachable, "cannot reach "+dbURL, "unknown authority")

	pulled := filepath.Join(dir, "ca.db")
	ok(t, "pull", "--ca-file", cert, pulled, dbURL)
	if n := docCount(t, pulled); n != 1 {
		t.Errorf("pull --ca-file: %d docs", n)
	}
	r = cli(t, nil, "pull", "--insecure", filepath.Join(dir, "insecure.db"), dbURL)
	if r.code != 0 || !strings.Contains(r.stderr, "warning: --insecure") {
		t.Errorf("pull --insecure: exit %d, stderr %q", r.code, r.stderr)
	}
}
