package strictjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	kjson "sigs.k8s.io/json"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

// sample reaches every shape the walker reads: embedded structs (inline
// and by pointer), a named embedded struct, pointers, maps, slices, an
// array, interface values, self-decoding types, "-" and ",string".
type sample struct {
	metav1.TypeMeta `json:",inline"`
	*Embedded
	Named   Embedded          `json:"named"`
	Name    string            `json:"name"`
	Count   *int32            `json:"count,omitempty"`
	Labels  map[string]string `json:"labels"`
	Items   []item            `json:"items"`
	Pair    [2]int            `json:"pair"`
	Any     any               `json:"any"`
	Free    map[string]any    `json:"free"`
	When    metav1.Time       `json:"when"`
	Size    resource.Quantity `json:"size"`
	Port    intstr.IntOrString
	Skipped string `json:"-"`
	Quoted  int64  `json:"quoted,string"`
	Raw     []byte `json:"raw"`
	hidden  string //nolint:unused // an unexported field: its name is no key
}

type Embedded struct {
	Inner string `json:"inner"`
	Depth int    `json:"depth"`
}

type item struct {
	Key   string   `json:"key"`
	Value *float64 `json:"value"`
}

// generic is the value in encodes (json.Number for numbers, as a caller's
// map holds some number type), or nil when in is not one JSON value.
func generic(in []byte) any {
	dec := json.NewDecoder(bytes.NewReader(in))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil
	}
	return v
}

func TestUnmarshalAgreesWithUnmarshalStrict(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		plain    bool // the encoding/json path may answer
	}{
		{"all shapes", `{"apiVersion":"v1","kind":"K","inner":"i","depth":2,"named":{"inner":"n"},"name":"x","count":3,"labels":{"a":"b"},"items":[{"key":"k","value":1.5}],"pair":[1,2],"any":"s","free":{"k":[true,null,"x"]},"when":"2026-01-02T03:04:05Z","size":"10Gi","Port":8080,"quoted":"12","raw":"aGk="}`, true},
		{"nulls", `{"count":null,"labels":null,"any":null,"named":null}`, true},
		{"field name without tag", `{"Port":"http"}`, true},
		{"case-insensitive key", `{"Name":"x"}`, false},
		{"case-insensitive nested key", `{"items":[{"KEY":"k"}]}`, false},
		{"case-insensitive promoted key", `{"Inner":"i"}`, false},
		{"unknown key", `{"nope":1}`, false},
		{"skipped field's name", `{"Skipped":"x"}`, false},
		{"unexported field's name", `{"hidden":"x"}`, false},
		{"number below interface", `{"any":{"n":1}}`, false},
		{"number in free map", `{"free":{"n":[1]}}`, false},
		{"wrong type", `{"name":1}`, false},
		{"trailing data", `{"name":"x"} {}`, false},
		{"malformed", `{"name":`, false},
		{"not an object", `[1]`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := []byte(tc.in)
			var fast sample
			assert.Equal(t, tc.plain, plain(in, generic(in), &fast), "plain")
			assertSame(t, in, generic(in), func() any { return &sample{} })
		})
	}
}

// The caller's tree is read as a map is: a profile's keys in the wrong
// case are doubted there too.
func TestTreeMapsAreChecked(t *testing.T) {
	m := tree.NewMap()
	m.Set("name", "x")
	m.Set("labels", map[string]any{"a": "b"})
	data, err := m.MarshalJSON()
	require.NoError(t, err)
	var v sample
	assert.True(t, plain(data, m, &v))
	m.Set("Inner", "i")
	data, err = m.MarshalJSON()
	require.NoError(t, err)
	assert.False(t, plain(data, m, &v))
	assertSame(t, data, m, func() any { return &sample{} })
	m.Delete("Inner")
	m.Set("any", []any{int64(1)})
	data, err = m.MarshalJSON()
	require.NoError(t, err)
	assert.False(t, plain(data, m, &v), "an int64 below an interface")
	assertSame(t, data, m, func() any { return &sample{} })
}

// Two fields claiming one name at the same depth: encoding/json keeps
// neither (or the tagged one); the walker doubts the name.
func TestClashingPromotedNamesAreDoubted(t *testing.T) {
	type A struct{ X string }
	type B struct{ X string }
	type both struct {
		A
		B
	}
	assert.NotContains(t, fieldsOf(reflect.TypeFor[both]()).exact, "X")
	in := []byte(`{"X":"1"}`)
	var v both
	assert.False(t, plain(in, generic(in), &v))
	assertSame(t, in, generic(in), func() any { return &both{} })
}

func TestUnmarshalStartsAgainFromZeroWhenItDefers(t *testing.T) {
	// encoding/json fills name and count, then the key in the wrong case
	// sends the input to UnmarshalStrict: the value is its decode alone.
	in := []byte(`{"name":"a","count":2,"Labels":{"x":"1"}}`)
	var v sample
	strict, err := Unmarshal(in, generic(in), &v)
	require.NoError(t, err)
	require.Len(t, strict, 1)
	assert.Contains(t, strict[0].Error(), `unknown field "Labels"`)
	var want sample
	_, _ = kjson.UnmarshalStrict(in, &want)
	assert.Equal(t, want, v)
	assert.Nil(t, v.Labels)
}

// A RayCluster spec as profiles write one decodes on the fast path.
func TestRayClusterSpecTakesThePlainPath(t *testing.T) {
	in := []byte(`{"rayVersion":"2.49.0","headGroupSpec":{"rayStartParams":{"num-cpus":"0"},"template":{"spec":{"containers":[{"name":"ray-head","image":"nvcr.io/nvidia/nemo-rl:v0.4","resources":{"limits":{"cpu":"8","memory":"64Gi"}},"volumeMounts":[{"name":"lustre","mountPath":"/lustre","subPath":"users/alice"}],"env":[{"name":"WANDB_API_KEY","valueFrom":{"secretKeyRef":{"name":"wandb","key":"api-key"}}}]}],"volumes":[{"name":"lustre","persistentVolumeClaim":{"claimName":"lustre-pvc"}}],"tolerations":[{"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"}]}}},"workerGroupSpecs":[{"groupName":"gpu-workers","replicas":4,"minReplicas":4,"maxReplicas":4,"numOfHosts":1,"rayStartParams":{},"template":{"spec":{"containers":[{"name":"ray-worker","image":"i","resources":{"limits":{"nvidia.com/gpu":4}},"securityContext":{"capabilities":{"add":["IPC_LOCK"]}}}],"resourceClaims":[{"name":"roce","resourceClaimTemplateName":"roce"}]}}}]}`)
	var v rayv1.RayClusterSpec
	assert.True(t, plain(in, generic(in), &v))
	assertSame(t, in, generic(in), func() any { return &rayv1.RayClusterSpec{} })
	// ...and a key in the wrong case inside it does not.
	bad := []byte(`{"headGroupSpec":{"template":{"spec":{"nodeselector":{"a":"b"}}}}}`)
	assert.False(t, plain(bad, generic(bad), &v))
	strict, err := Unmarshal(bad, generic(bad), &rayv1.RayClusterSpec{})
	require.NoError(t, err)
	require.Len(t, strict, 1)
	assert.Contains(t, strict[0].Error(), `unknown field "headGroupSpec.template.spec.nodeselector"`)
}

// assertSame: Unmarshal gives UnmarshalStrict's errors and value.
func assertSame(t *testing.T, in []byte, from any, fresh func() any) {
	t.Helper()
	got, want := fresh(), fresh()
	gotStrict, gotErr := Unmarshal(in, from, got)
	wantStrict, wantErr := kjson.UnmarshalStrict(in, want)
	require.Equal(t, fmt.Sprint(wantErr), fmt.Sprint(gotErr), "error")
	require.Equal(t, fmt.Sprint(wantStrict), fmt.Sprint(gotStrict), "strict errors")
	if wantErr == nil {
		require.Equal(t, want, got, "value")
	}
}
