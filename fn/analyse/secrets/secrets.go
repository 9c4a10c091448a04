// Package secrets recognises credentials: names that hold one and values
// shaped like one. It is the one scanner the render-time check (every entry
// point refuses a manifest that would carry a credential) and the tests over
// committed outputs share, so both agree on what a secret looks like.
//
// Findings never carry the value: they say where and what kind, so a
// message about a leaked token does not leak it again (CI posts its output
// on pull requests).
package secrets

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/lazyre"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

// credentialWords are parts of a name that mean it holds a credential,
// matched inside a word ("HFTOKEN", "DB_PASSWORD").
var credentialWords = []string{"TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "CREDS", "APIKEY", "PRIVATEKEY", "ACCESSKEY"}

// credentialParts are whole words of a name that mean the same but are too
// short to match inside a word (PAT is in PATH, PASS in PASSTHROUGH).
var credentialParts = map[string]bool{"PAT": true, "PASS": true, "PWD": true, "AUTH": true, "CRED": true, "APIKEY": true}

// harmless are words that contain a credential word without being one.
var harmless = []string{"TOKENIZER", "TOKENIZERS", "TOKENS"}

// joinedWords are credentials spelt as two words ("api-key").
var joinedWords = []string{"APIKEY", "PRIVATEKEY", "ACCESSKEY", "SECRETKEY"}

// Rules are the lists Name and Value decide by, for the copy of them the
// Helm chart's template carries (fn/frontend/chartgen writes them into the chart's
// data; its tests hold the copy to Name and Value).
type Rules struct {
	Words    []string `json:"words"`
	Parts    []string `json:"parts"`
	Harmless []string `json:"harmless"`
	Joined   []string `json:"joined"`
	Shapes   []Shape  `json:"shapes"`
}

// Shape is a credential format: what it is and its RE2 pattern.
type Shape struct {
	Kind    string `json:"kind"`
	Pattern string `json:"pattern"`
}

// NameRules returns the rules.
func NameRules() Rules {
	r := Rules{Words: credentialWords, Harmless: harmless, Joined: joinedWords}
	for p := range credentialParts {
		r.Parts = append(r.Parts, p)
	}
	sort.Strings(r.Parts)
	for _, sh := range shapes {
		r.Shapes = append(r.Shapes, Shape{Kind: sh.kind, Pattern: sh.re().String()})
	}
	return r
}

// Name reports whether name (an env var, a label or annotation key) names
// a credential: GITHUB_PAT, WANDB_API_KEY, WANDB_KEY, DB_PASS, HF_AUTH,
// HF_TOKEN, AWS_SECRET_ACCESS_KEY, ... A last word KEY counts (SSH_KEY,
// NGC_KEY); a KEY elsewhere does not (KEY_PATH names a file).
func Name(name string) bool {
	words := strings.FieldsFunc(strings.ToUpper(name), func(r rune) bool {
		return (r < 'A' || r > 'Z') && (r < '0' || r > '9')
	})
	for i, w := range words {
		if credentialParts[w] || (w == "KEY" && i == len(words)-1) {
			return true
		}
		if isHarmless(w) {
			continue
		}
		for _, c := range credentialWords {
			if strings.Contains(w, c) {
				return true
			}
		}
	}
	// Joined words: "api-key" is two words of one credential.
	joined := strings.Join(words, "")
	for _, c := range joinedWords {
		if strings.Contains(joined, c) {
			return true
		}
	}
	return false
}

func isHarmless(w string) bool {
	for _, h := range harmless {
		if w == h {
			return true
		}
	}
	return false
}

// shapes are credential formats, recognised under any name. markers are
// substrings every match contains (each pattern's literal part): a value
// holding none of them cannot match, which spares the regular expressions
// nearly every value of a render (TestMarkersAreNecessary holds them).
var shapes = []struct {
	kind    string
	markers []string
	re      func() *regexp.Regexp
}{
	{"an AWS access key id", []string{"AKIA", "ASIA"}, lazyre.New(`\b(AKIA|ASIA)[0-9A-Z]{16}\b`)},
	{"a GitHub token", []string{"gh", "github_pat_"}, lazyre.New(`\bgh[pousr]_[A-Za-z0-9]{20,}|\bgithub_pat_[A-Za-z0-9_]{20,}`)},
	{"a Hugging Face token", []string{"hf_"}, lazyre.New(`\bhf_[A-Za-z0-9]{20,}`)},
	{"an NVIDIA API key", []string{"nvapi-"}, lazyre.New(`\bnvapi-[A-Za-z0-9_-]{20,}`)},
	{"an API key (sk-...)", []string{"sk-"}, lazyre.New(`\bsk-[A-Za-z0-9_-]{20,}`)},
	{"a Slack token", []string{"xox"}, lazyre.New(`\bxox[abprs]-[A-Za-z0-9-]{10,}`)},
	{"a private key", []string{"-----BEGIN "}, lazyre.New(`-----BEGIN [A-Z ]*PRIVATE KEY-----`)},
	// A password in a URL; one taken from a variable ($VAR, ${VAR},
	// $(VAR)) is expanded at run time, not embedded.
	{"a URL with a password", []string{"://"}, lazyre.New(`\b[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@'"]+:[^$/\s@'"][^/\s@'"]*@`)},
}

// Value reports whether s holds a credential-shaped value, and which kind.
func Value(s string) (string, bool) {
	for _, sh := range shapes {
		if containsAny(s, sh.markers) && sh.re().MatchString(s) {
			return sh.kind, true
		}
	}
	return "", false
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// Literal reports whether an env value embeds something rather than
// referring to it: empty and pure references ($(VAR), ${VAR}, $VAR) are
// not literals.
func Literal(v string) bool {
	v = strings.TrimSpace(v)
	v = strings.Trim(v, `"'`)
	if v == "" {
		return false
	}
	return !strings.HasPrefix(v, "$")
}

var exportRE = lazyre.New(`(?m)^[ \t]*(?:export[ \t]+)([A-Za-z_][A-Za-z0-9_]*)=(.*)$`)

// Exports lists the credential-named variables that a shell script (an
// entrypoint) exports with a literal value: `export HF_TOKEN=hf_...`.
func Exports(script string) []string {
	var out []string
	for _, m := range exportRE().FindAllStringSubmatch(script, -1) {
		if Name(m[1]) && Literal(m[2]) {
			out = append(out, m[1])
		}
	}
	return out
}

// Finding is one secret found in a document: where, and what it is.
type Finding struct {
	Path string
	What string
}

func (f Finding) String() string { return f.Path + ": " + f.What }

// Scan walks a decoded document (maps, lists, strings) and reports env
// entries that give a credential-named variable a literal value, labels and
// annotations with a credential-named key, shell exports of credentials,
// and credential-shaped values anywhere. The findings are sorted by path.
func Scan(doc any) []Finding {
	var out []Finding
	walk(doc, "", &out)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

const refHint = "expected a reference (valueFrom.secretKeyRef, envFrom.secretRef, or a variable the pod gets from a Secret), never the credential itself"

func walk(v any, p string, out *[]Finding) {
	switch t := v.(type) {
	case map[string]any:
		if name, ok := t["name"].(string); ok {
			if value, ok := t["value"].(string); ok && Name(name) && Literal(value) {
				*out = append(*out, Finding{join(p, "value") + " (" + name + ")",
					"a literal value under a credential-looking name; " + refHint})
			}
		}
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			c := t[k]
			if (k == "labels" || k == "annotations") && strings.HasSuffix(p, "metadata") {
				if m, ok := c.(map[string]any); ok {
					for _, lk := range tree.SortedKeys(m) {
						if s, ok := m[lk].(string); ok && Name(lk) && Literal(s) {
							*out = append(*out, Finding{join(join(p, k), lk),
								"a credential-looking " + strings.TrimSuffix(k, "s") + " key with a value; labels and annotations are readable by anyone who can list the object, " + refHint})
						}
					}
				}
			}
			walk(c, join(p, k), out)
		}
	case []any:
		for i, c := range t {
			walk(c, p+"["+strconv.Itoa(i)+"]", out)
		}
	case string:
		if kind, ok := Value(t); ok {
			*out = append(*out, Finding{p, fmt.Sprintf("holds what looks like %s; %s", kind, refHint)})
		}
		for _, name := range Exports(t) {
			*out = append(*out, Finding{p, fmt.Sprintf("exports %s with a literal value; %s", name, refHint)})
		}
	}
}

func join(p, k string) string {
	if p == "" {
		return k
	}
	return p + "." + k
}

// ScanYAML scans every document of a YAML stream; a stream that does not
// parse is an error (a scanner that skipped it would pass it).
func ScanYAML(data []byte) ([]Finding, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var out []Finding
	for i := 1; ; i++ {
		var doc any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, fmt.Errorf("document %d: %w", i, err)
		}
		for _, f := range Scan(doc) {
			f.Path = fmt.Sprintf("document %d: %s", i, f.Path)
			out = append(out, f)
		}
	}
}
