package strictjson

import (
	"encoding/json"
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
)

// FuzzSameAsUnmarshalStrict: for any JSON value, Unmarshal of its encoding
// gives sigs.k8s.io/json.UnmarshalStrict's errors and value, into a type
// with every shape the check reads and into a RayClusterSpec; input that
// is not one JSON value too.
func FuzzSameAsUnmarshalStrict(f *testing.F) {
	for _, s := range []string{
		`{"apiVersion":"v1","inner":"i","named":{"depth":1},"name":"x","count":3,"labels":{"a":"b"},"items":[{"key":"k","value":1.5}],"pair":[1,2],"any":"s","free":{"k":[true,null]},"when":"2026-01-02T03:04:05Z","size":"10Gi","Port":8080,"quoted":"12","raw":"aGk="}`,
		`{"Name":"x","name":"y"}`, `{"any":{"n":1}}`, `{"items":[{"KEY":"k"}]}`, `{"labels":{"a":"1","b":"2"}}`,
		`{"headGroupSpec":{"template":{"spec":{"containers":[{"name":"c","ports":[{"containerPort":1}]}]}}}}`,
		`null`, `{}`, `[]`, `{"size":"1x"}`, `{"when":1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		from := generic(in)
		if from != nil {
			// Unmarshal's input is the encoding of the caller's value.
			var err error
			if in, err = json.Marshal(from); err != nil {
				t.Skip()
			}
		}
		assertSame(t, in, from, func() any { return &sample{} })
		assertSame(t, in, from, func() any { return &rayv1.RayClusterSpec{} })
	})
}
