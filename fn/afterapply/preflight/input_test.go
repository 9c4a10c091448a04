package preflight

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
)

// One line per verdict, namespaced when the object is, its why and
// detail made safe to print on one line, then the tally; or the report
// as JSON.
func TestWrite(t *testing.T) {
	rep := Report{Namespace: "a", Lines: []Line{
		{Need: Need{Kind: "Namespace", Name: "a"}, State: OK},
		{Need: Need{Kind: "Secret", Namespace: "a", Name: "s", Why: "env of head\r"}, State: Missing, Detail: "not found\nforged line"},
		{Need: Need{Kind: "Nodes", Name: "RayJob/j head"}, State: CannotTell, Detail: "denied"},
	}}
	cases := []struct {
		format, want string
	}{
		{"text", "ok           Namespace a\n" +
			"missing      Secret a/s (env of head\\r): not found\\nforged line\n" +
			"cannot tell  Nodes RayJob/j head: denied\n" +
			"\n1 ok, 1 missing, 1 cannot tell (namespace a)\n"},
		{"json", ""},
	}
	for _, c := range cases {
		t.Run(c.format, func(t *testing.T) {
			var b bytes.Buffer
			require.NoError(t, Write(&b, rep, c.format))
			if c.format != "json" {
				assert.Equal(t, c.want, b.String())
				return
			}
			var back struct {
				Namespace     string `json:"namespace"`
				Prerequisites []struct{ Kind, Namespace, Name, State, Detail string }
			}
			require.NoError(t, json.Unmarshal(b.Bytes(), &back))
			assert.Equal(t, "a", back.Namespace)
			require.Len(t, back.Prerequisites, 3)
			assert.Equal(t, "not found\nforged line", back.Prerequisites[1].Detail, "JSON keeps the detail as it is")
			assert.Equal(t, "cannot tell", back.Prerequisites[2].State)
		})
	}
}

// A run's namespace is its objects' own, else -n, else the kubeconfig's;
// -n that contradicts the objects is a FlagError; objects without a
// namespace are in the first; Kueue's labels and each namespace's Pod
// Security level are read per object and per namespace.
func TestInputOf(t *testing.T) {
	pod := func(ns, labels, securityContext string) string {
		meta := "{name: p" + ns + labels + "}"
		if ns != "" {
			meta = "{name: p" + ns + ", namespace: " + ns + labels + "}"
		}
		return "apiVersion: v1\nkind: Pod\nmetadata: " + meta + "\nspec: {containers: [{name: c, image: i" + securityContext + "}]}\n---\n"
	}
	privileged := ", securityContext: {privileged: true}"
	cases := []struct {
		name, yaml, flag string
		namespace        string
		podSpaces        []string
		security         map[string]string
		queues           map[string]string
		err              string
	}{
		{name: "the objects' own namespaces, in order", yaml: pod("b", "", "") + pod("a", "", "") + pod("", "", privileged),
			namespace: "b, a", podSpaces: []string{"b", "a", "b"}, security: map[string]string{"a": "baseline", "b": "privileged"}},
		{name: "-n names one of them", yaml: pod("b", "", ""), flag: "b", namespace: "b", podSpaces: []string{"b"}},
		{name: "-n when the objects name none", yaml: pod("", "", ""), flag: "f", namespace: "f", podSpaces: []string{"f"}},
		{name: "else the kubeconfig's", yaml: pod("", "", ""), namespace: "ctx", podSpaces: []string{"ctx"}},
		{name: "-n contradicts the objects", yaml: pod("b", "", ""), flag: "f", err: "-n f: the objects are in namespace b"},
		{name: "Kueue's queue label, per object", yaml: pod("", ", labels: {kueue.x-k8s.io/queue-name: lab}", "") + pod("b", ", labels: {kueue.x-k8s.io/queue-name: q}", ""),
			namespace: "b", podSpaces: []string{"b", "b"}, queues: map[string]string{"b/Pod/p": "lab", "b/Pod/pb": "q"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			docs, err := rendered.Decode("in.yaml", []byte(c.yaml))
			require.NoError(t, err)
			in, err := InputOf(docs, c.flag, "ctx")
			if c.err != "" {
				var fe *FlagError
				require.True(t, errors.As(err, &fe), "%v", err)
				assert.EqualError(t, err, c.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.namespace, in.Namespace)
			var spaces []string
			for _, p := range in.Pods {
				spaces = append(spaces, p.Namespace)
			}
			assert.Equal(t, c.podSpaces, spaces)
			for _, sp := range in.Spaces {
				if want, ok := c.security[sp.Namespace]; ok {
					assert.Equal(t, want, sp.PodSecurity, sp.Namespace)
				}
				if sp.PodSecurity == "privileged" {
					assert.NotEmpty(t, sp.PodSecurityReason, "the fields that make it privileged")
				}
			}
			if c.queues == nil {
				c.queues = map[string]string{}
			}
			assert.Equal(t, c.queues, in.Queues)
			assert.Contains(t, in.APIVersions, "v1")
		})
	}
}
