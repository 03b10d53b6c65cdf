// Generator of tests/golden/go-escaping.json (not built by cargo).
//
// Reproduces the reference CLI's encoder (internal/seal/encode.go in
// SamyGhannad/seal-cli: an ordered map whose MarshalJSON encodes each key and
// value with a json.Encoder in HTML-escaping mode, then json.MarshalIndent with
// "" and "  ", plus a trailing LF) using the standard library only.
//
// Regenerate with:
//   go run go-escaping.gen.go | sed -e 's/\\u0008/\\b/g' -e 's/\\u000c/\\f/g' > go-escaping.json
// The sed step is only needed with Go older than 1.22: since Go 1.22,
// encoding/json writes U+0008 and U+000C as \b and \f (Go 1.22 release notes),
// and the reference CLI is built with Go 1.26. The golden file was produced
// with Go 1.19.8 and that substitution.
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"sort"
	"strings"
)

type kv struct {
	k string
	v interface{}
}
type omap []kv

// Same as iancoleman/orderedmap MarshalJSON with escapeHTML true.
func (o omap) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(true)
	for i, e := range o {
		if i > 0 {
			buf.WriteByte(',')
		}
		if err := enc.Encode(e.k); err != nil {
			return nil, err
		}
		buf.WriteByte(':')
		if err := enc.Encode(e.v); err != nil {
			return nil, err
		}
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

func sha(b []byte) string { s := sha256.Sum256(b); return "sha256:" + hex.EncodeToString(s[:]) }

type bundle struct {
	rev   string
	files map[string]string
}

func main() {
	bundles := map[string]bundle{
		"./s/<a&b>":             {"rev \\ \"q\" <x>", map[string]string{"b\bf\f": sha([]byte("1")), "n\nr\rt\t": sha([]byte("2")), "esc\x1b[0m": sha([]byte("3"))}},
		"./s/line\u2028sep\u2029": {"", map[string]string{"caf\u00e9/\U0001F600": sha([]byte("4")), "ctl\x01\x1f\x7f": sha([]byte("5"))}},
		"./s/ctl\x01\x1f\x7f":     {"", map[string]string{"quote\"d": sha([]byte("6")), "sub/dir/x": sha([]byte("7"))}},
		"./t/<x>&y":             {"", map[string]string{".": sha([]byte("8"))}},
	}
	discovery := []string{"t/<x>&y", "s/*"}
	sort.Strings(discovery)
	keys := []string{}
	for k := range bundles {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	bm := omap{}
	for _, k := range keys {
		b := bundles[k]
		fk := []string{}
		for p := range b.files {
			fk = append(fk, p)
		}
		sort.Strings(fk)
		fm := omap{}
		lines := []string{}
		for _, p := range fk {
			fm = append(fm, kv{p, b.files[p]})
			lines = append(lines, p+":"+b.files[p])
		}
		e := omap{}
		if b.rev != "" {
			e = append(e, kv{"revision", b.rev})
		}
		e = append(e, kv{"contentHash", sha([]byte(strings.Join(lines, "\n")))}, kv{"files", fm})
		bm = append(bm, kv{k, e})
	}
	root := omap{{"version", 1}, {"discovery", discovery}, {"policy", "block"}, {"bundles", bm}}
	out, err := json.MarshalIndent(root, "", "  ")
	if err != nil {
		panic(err)
	}
	os.Stdout.Write(append(out, '\n'))
}
