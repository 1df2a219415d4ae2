package proxy

import (
	"container/list"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net/netip"
	"strings"
	"sync"
	"time"
)

// The certificate authority of TLS termination: the command trusts it (it
// is in the trust bundle srt exports inside), and the terminating proxy
// shows the command a leaf it signs for each name. An ephemeral CA lives
// in srt's memory alone and dies with the session; its key is never
// written anywhere.

// leafCacheSize is how many leaves a CA keeps (spec d.6).
const leafCacheSize = 256

// Validity of what an ephemeral CA and its leaves claim.
const (
	caLifetime   = 7 * 24 * time.Hour
	leafLifetime = 24 * time.Hour
	// backdate covers clocks a little behind srt's.
	backdate = time.Hour
)

// CA signs leaves. Make one with NewCA or LoadCA.
type CA struct {
	cert *x509.Certificate
	key  crypto.Signer
	// PEM is the CA certificate, for the trust bundle.
	PEM []byte
	// Source says where the CA came from, for its owner to tell whether
	// new settings name the same one.
	Source string
	// leafKey is the key of every leaf: making a key per name would cost
	// a handshake's worth of time and buy nothing, as every leaf lives in
	// the same process as this CA's own key.
	leafKey *ecdsa.PrivateKey

	mu    sync.Mutex
	order *list.List // of *leafEntry, most recently used first
	byKey map[string]*list.Element
	now   func() time.Time
}

type leafEntry struct {
	name string
	cert *tls.Certificate
}

// NewCA makes an ephemeral CA.
func NewCA() (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          randomSerial(),
		Subject:               pkix.Name{CommonName: "srt sandbox TLS inspection (ephemeral)", Organization: []string{"srt"}},
		NotBefore:             now.Add(-backdate),
		NotAfter:              now.Add(caLifetime),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return newCA(cert, key)
}

// LoadCA reads a CA from PEM: a certificate (the first CERTIFICATE block)
// and its private key (PKCS#8, PKCS#1 or SEC 1). The certificate must be
// a CA's and match the key.
func LoadCA(certPEM, keyPEM []byte) (*CA, error) {
	var cert *x509.Certificate
	for rest := certPEM; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		if b.Type == "CERTIFICATE" {
			c, err := x509.ParseCertificate(b.Bytes)
			if err != nil {
				return nil, fmt.Errorf("the CA certificate: %w", err)
			}
			cert = c
			break
		}
	}
	if cert == nil {
		return nil, errors.New("the CA certificate file holds no CERTIFICATE block")
	}
	if !cert.IsCA || !cert.BasicConstraintsValid {
		return nil, errors.New("the CA certificate is not a CA's (basicConstraints CA:TRUE is missing)")
	}
	pair, err := tls.X509KeyPair(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw}), keyPEM)
	if err != nil {
		return nil, fmt.Errorf("the CA key: %w", err)
	}
	key, ok := pair.PrivateKey.(crypto.Signer)
	if !ok {
		return nil, errors.New("the CA key cannot sign")
	}
	return newCA(cert, key)
}

func newCA(cert *x509.Certificate, key crypto.Signer) (*CA, error) {
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	return &CA{
		cert:    cert,
		key:     key,
		PEM:     pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw}),
		leafKey: leafKey,
		order:   list.New(),
		byKey:   map[string]*list.Element{},
		now:     time.Now,
	}, nil
}

// Certificate is the CA's certificate.
func (ca *CA) Certificate() *x509.Certificate { return ca.cert }

// Leaf returns a certificate for name (a host name or an address), made
// once and kept among the last leafCacheSize used while it stays valid.
func (ca *CA) Leaf(name string) (*tls.Certificate, error) {
	name = strings.ToLower(strings.TrimSuffix(name, "."))
	if name == "" {
		return nil, errors.New("no name to make a certificate for")
	}
	ca.mu.Lock()
	if e, ok := ca.byKey[name]; ok {
		le := e.Value.(*leafEntry)
		if ca.now().Before(le.cert.Leaf.NotAfter.Add(-time.Hour)) {
			ca.order.MoveToFront(e)
			ca.mu.Unlock()
			return le.cert, nil
		}
		ca.order.Remove(e)
		delete(ca.byKey, name)
	}
	ca.mu.Unlock()
	cert, err := ca.mint(name)
	if err != nil {
		return nil, err
	}
	ca.mu.Lock()
	defer ca.mu.Unlock()
	if e, ok := ca.byKey[name]; ok { // minted meanwhile by another connection
		return e.Value.(*leafEntry).cert, nil
	}
	ca.byKey[name] = ca.order.PushFront(&leafEntry{name: name, cert: cert})
	for ca.order.Len() > leafCacheSize {
		last := ca.order.Back()
		ca.order.Remove(last)
		delete(ca.byKey, last.Value.(*leafEntry).name)
	}
	return cert, nil
}

// mint signs a new leaf for name.
func (ca *CA) mint(name string) (*tls.Certificate, error) {
	now := ca.now()
	tmpl := &x509.Certificate{
		SerialNumber: randomSerial(),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    now.Add(-backdate),
		NotAfter:     now.Add(leafLifetime),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if tmpl.NotAfter.After(ca.cert.NotAfter) {
		tmpl.NotAfter = ca.cert.NotAfter
	}
	if a, err := netip.ParseAddr(strings.Trim(name, "[]")); err == nil {
		tmpl.IPAddresses = append(tmpl.IPAddresses, a.Unmap().AsSlice())
	} else {
		tmpl.DNSNames = []string{name}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, ca.leafKey.Public(), ca.key)
	if err != nil {
		return nil, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &tls.Certificate{Certificate: [][]byte{der, ca.cert.Raw}, PrivateKey: ca.leafKey, Leaf: leaf}, nil
}

// randomSerial is a positive 127-bit serial number.
func randomSerial() *big.Int {
	var b [16]byte
	rand.Read(b[:])
	b[0] &= 0x7f
	return new(big.Int).SetBytes(b[:])
}

// TrustBundle is what a command inside trusts: the CA first, then the
// host's roots (the PEM of hostRoots, as read from the system's bundle),
// then the CERTIFICATE blocks of extra — nothing else of those files (no
// keys), and each certificate once (a directory of roots names each
// twice, by name and by hash).
func TrustBundle(hostRoots []byte, ca *CA, extra ...[]byte) []byte {
	seen := map[string]bool{}
	b := appendCertificates(nil, ca.PEM, seen)
	b = appendCertificates(b, hostRoots, seen)
	for _, e := range extra {
		b = appendCertificates(b, e, seen)
	}
	return b
}

// appendCertificates appends the CERTIFICATE blocks of data not seen yet
// to b.
func appendCertificates(b, data []byte, seen map[string]bool) []byte {
	for rest := data; ; {
		var blk *pem.Block
		blk, rest = pem.Decode(rest)
		if blk == nil {
			return b
		}
		if blk.Type == "CERTIFICATE" && len(blk.Headers) == 0 && !seen[string(blk.Bytes)] {
			seen[string(blk.Bytes)] = true
			b = append(b, pem.EncodeToMemory(blk)...)
		}
	}
}
