package emit_test

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/emit"
)

// Typed objects become one YAML stream in Helm's install order (the
// ServiceAccount before the ConfigMap, whatever order they came in), keys
// sorted, the encoder's zero values (creationTimestamp: null) pruned.
func ExampleStream() {
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "recipe", Namespace: "ml"},
		Data:       map[string]string{"recipe.yaml": "cluster:\n  num_nodes: 4\n"},
	}
	sa := &corev1.ServiceAccount{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
		ObjectMeta: metav1.ObjectMeta{Name: "trainer", Namespace: "ml"},
	}
	docs, err := emit.Convert([]any{cm, sa})
	if err != nil {
		fmt.Println(err)
		return
	}
	out, err := emit.Stream(docs)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(string(out))
	// Output:
	// ---
	// apiVersion: v1
	// kind: ServiceAccount
	// metadata:
	//   name: trainer
	//   namespace: ml
	// ---
	// apiVersion: v1
	// data:
	//   recipe.yaml: |
	//     cluster:
	//       num_nodes: 4
	// kind: ConfigMap
	// metadata:
	//   name: recipe
	//   namespace: ml
}
