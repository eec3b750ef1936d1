// Package keys manages users' SSH and GPG keys and repositories' deploy
// keys: parsing and checking what clients upload, storing it, and the
// verification of GPG signatures (commits, and the token a key signs to
// prove its owner holds it).
package keys

import (
	"crypto/rsa"
	"crypto/x509"
	"encoding/asn1"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/ssh"
)

// SSHKey is a parsed, accepted SSH public key.
type SSHKey struct {
	Key ssh.PublicKey
	// Line is the key as one authorized_keys line without its comment.
	Line        string
	Fingerprint string
}

// minimumBits are the reference's default minimum key sizes per kind;
// a kind not listed (DSA) is refused.
var minimumBits = map[string]int{
	"ed25519":    256,
	"ed25519-sk": 256,
	"ecdsa":      256,
	"ecdsa-sk":   256,
	"rsa":        3071,
}

const ssh2Begin = "---- BEGIN SSH2 PUBLIC KEY ----"

// ParseSSHKey reads a public key as users paste it: an authorized_keys
// line (with or without its type and comment), an RFC 4716 ("SSH2") block
// or a PEM public key. The error text is what the API shows after
// "Invalid key content: ".
func ParseSSHKey(content string) (*SSHKey, error) {
	content = strings.TrimSpace(content)
	var blob []byte
	var declared string
	switch {
	case strings.HasPrefix(content, ssh2Begin):
		var b64 strings.Builder
		continued := false
		for _, line := range strings.Split(strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(content), "\n") {
			// Header lines (with ":"), their continuations and the
			// BEGIN/END markers carry no key data.
			if continued || strings.ContainsAny(line, ":-") {
				continued = strings.HasSuffix(line, "\\")
				continue
			}
			b64.WriteString(strings.TrimSpace(line))
		}
		var err error
		if blob, err = base64.StdEncoding.DecodeString(b64.String()); err != nil {
			return nil, fmt.Errorf("invalid key format: %v", err)
		}
	case strings.Contains(content, "-----BEGIN"):
		block, _ := pem.Decode([]byte(content))
		if block == nil {
			return nil, errors.New("failed to parse PEM block containing the public key")
		}
		if strings.Contains(block.Type, "PRIVATE") {
			return nil, errors.New("this is a private key, not a public key")
		}
		pub, err := x509.ParsePKIXPublicKey(block.Bytes)
		if err != nil {
			var rk rsa.PublicKey
			if _, err2 := asn1.Unmarshal(block.Bytes, &rk); err2 != nil {
				return nil, fmt.Errorf("failed to parse the DER public key: %v", err)
			}
			pub = &rk
		}
		k, err := ssh.NewPublicKey(pub)
		if err != nil {
			return nil, fmt.Errorf("unable to convert to an SSH public key: %v", err)
		}
		blob = k.Marshal()
	default:
		if strings.ContainsAny(content, "\r\n") {
			return nil, errors.New("only a single line with a single key please")
		}
		fields := strings.Fields(content)
		if len(fields) == 0 {
			return nil, errors.New("empty key")
		}
		b64 := fields[0]
		if len(fields) > 1 {
			declared, b64 = fields[0], fields[1]
		}
		var err error
		if blob, err = base64.StdEncoding.DecodeString(b64); err != nil {
			return nil, fmt.Errorf("invalid key format: %v", err)
		}
	}
	key, err := ssh.ParsePublicKey(blob)
	if err != nil {
		return nil, fmt.Errorf("invalid ssh public key: %v", err)
	}
	if declared != "" && declared != key.Type() {
		return nil, fmt.Errorf("key type and content does not match: %s - %s", declared, key.Type())
	}
	kind, bits, err := keySize(key)
	if err != nil {
		return nil, err
	}
	min, ok := minimumBits[kind]
	if !ok {
		return nil, fmt.Errorf("key type is not allowed: %s", kind)
	}
	if bits < min {
		return nil, fmt.Errorf("key length is not enough: got %d, needs %d", bits, min)
	}
	line := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(key)))
	return &SSHKey{Key: key, Line: line, Fingerprint: ssh.FingerprintSHA256(key)}, nil
}

// keySize names the key's kind and size in bits.
func keySize(k ssh.PublicKey) (string, int, error) {
	switch k.Type() {
	case ssh.KeyAlgoRSA:
		if ck, ok := k.(ssh.CryptoPublicKey); ok {
			if rk, ok := ck.CryptoPublicKey().(*rsa.PublicKey); ok {
				return "rsa", rk.N.BitLen(), nil
			}
		}
	case ssh.KeyAlgoDSA: //nolint:staticcheck // recognised only to refuse it
		return "dsa", 1024, nil
	case ssh.KeyAlgoECDSA256:
		return "ecdsa", 256, nil
	case ssh.KeyAlgoECDSA384:
		return "ecdsa", 384, nil
	case ssh.KeyAlgoECDSA521:
		return "ecdsa", 521, nil
	case ssh.KeyAlgoED25519:
		return "ed25519", 256, nil
	case ssh.KeyAlgoSKECDSA256:
		return "ecdsa-sk", 256, nil
	case ssh.KeyAlgoSKED25519:
		return "ed25519-sk", 256, nil
	}
	return "", 0, fmt.Errorf("key type is not allowed: %s", k.Type())
}
