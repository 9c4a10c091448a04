// Command floor links only the packages every render needs and does
// nothing: the API types KubeRay's typed RayJob and RayCluster embed
// (k8s.io/api/core/v1), KubeRay's own types, and kyaml's yaml package.
// Its start is the floor under nrl-krm's (BenchmarkFunctionProcess).
package main

import (
	_ "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	_ "k8s.io/api/core/v1"
	_ "sigs.k8s.io/kustomize/kyaml/yaml"
)

func main() {}
