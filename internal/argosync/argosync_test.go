package argosync

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestOwners(t *testing.T) {
	fields := []metav1.ManagedFieldsEntry{
		{Manager: "kueue", Operation: metav1.ManagedFieldsOperationUpdate, FieldsV1: rawFields(`{"f:spec":{"f:suspend":{}}}`)},
		{Manager: "kuberay-operator", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status", FieldsV1: rawFields(`{"f:status":{".":{},"f:jobStatus":{},"f:rayClusterName":{}}}`)},
		{Manager: "kuberay-operator", Operation: metav1.ManagedFieldsOperationUpdate, FieldsV1: rawFields(`{"f:metadata":{"f:finalizers":{".":{},"v:\"ray.io/rayjob-finalizer\"":{}}}}`)},
	}
	got, err := Owners(fields)
	require.NoError(t, err)
	assert.Equal(t, map[string][]string{
		"kueue":                   {"spec.suspend"},
		"kuberay-operator/status": {"status.jobStatus", "status.rayClusterName"},
		"kuberay-operator":        {`metadata.finalizers.v:"ray.io/rayjob-finalizer"`},
	}, got)
	assert.Equal(t, []string{"kuberay-operator", "kueue"}, Managers(fields))
	_, err = Owners([]metav1.ManagedFieldsEntry{{Manager: "x", FieldsV1: rawFields(`{`)}})
	assert.ErrorContains(t, err, "managedFields of x")
}

func rawFields(raw string) *metav1.FieldsV1 {
	f := &metav1.FieldsV1{}
	f.SetRawString(raw)
	return f
}
