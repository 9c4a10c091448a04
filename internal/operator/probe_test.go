package operator

import (
	"testing"

	ray "github.com/ray-project/kuberay/ray-operator/controllers/ray"
)

func TestProbe(t *testing.T) { _ = ray.NewReconciler }
