package profile

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/interp"
)

func TestNearestKey(t *testing.T) {
	for _, tc := range []struct{ name, field, want string }{
		{"top-level typo", "serviceAcount", "serviceAccount"},
		{"missing plural", "imagePullSecret", "imagePullSecrets"},
		{"case", "servicEaccount", "serviceAccount"},
		{"nested schema key", "launch.entrypiont", "entrypoint"},
		{"inside the KubeRay spec", "kuberay.training.spec.workerGroupSpecs[0].groupNme", "groupName"},
		{"inside a pod through embedded structs", "kuberay.training.spec.headGroupSpec.template.spec.containers[0].volumeMount", "volumeMounts"},
		{"map values", "deployments.reward.healthCheckURL", "healthCheckUrl"},
		{"nothing close", "somethingElse", ""},
		{"unknown parent", "nosuch.child", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, nearestKey(tc.field))
		})
	}
}

func TestKeyLine(t *testing.T) {
	src := []byte(`_shared:
  env: &env
    - {name: A, valu: b}
image: x
serviceAcount: y
kuberay:
  training:
    spec:
      workerGroupSpecs:
        - groupName: g
          replicas: 1
        - groupNme: h
          template:
            spec:
              containers:
                - name: w
                  env: *env
`)
	for _, tc := range []struct {
		name, field string
		want        int
	}{
		{"top level", "serviceAcount", 5},
		{"list item", "kuberay.training.spec.workerGroupSpecs[1].groupNme", 12},
		{"through an alias to the anchor", "kuberay.training.spec.workerGroupSpecs[1].template.spec.containers[0].env[0].valu", 3},
		{"not in the file", "launch.entrypoint", 0},
		{"index out of range", "kuberay.training.spec.workerGroupSpecs[5].x", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, keyLine(parseNode(src), tc.field))
		})
	}
	require.Equal(t, 2, keyLine(parseNode([]byte("infra:\n  imagePullSecret: [a]\n")), "imagePullSecret"), "a recipe's infra: mapping")
	require.Equal(t, 0, keyLine(parseNode([]byte("a: [")), "a"), "unparsable file")
	require.Equal(t, "line 1: ", lineFinder([]byte("serviceAcount: x\n"))("serviceAcount"))
	require.Equal(t, "", lineFinder(nil)("serviceAcount"), "no file (a chart or KRM input without the bytes)")
}

func TestShellHint(t *testing.T) {
	file := []byte("launch:\n  entrypoint: |\n    echo \\${OK:-1}\n    LOG=${LOG_DIR:-/tmp}/x\n")
	for _, tc := range []struct {
		name, value, want string
		ok                bool
	}{
		{"default value", "LOG=${LOG_DIR:-/tmp}/x", `line 4: ${LOG_DIR:-/tmp} is shell syntax that OmegaConf (which resolves every profile string) cannot resolve; write \${LOG_DIR:-/tmp} so the shell receives it`, true},
		{"upper-case variable", "cd ${HOME}", `${HOME} is shell syntax that OmegaConf (which resolves every profile string) cannot resolve; write \${HOME} so the shell receives it`, true},
		{"length", "n=${#ARR}", `${#ARR} is shell syntax that OmegaConf (which resolves every profile string) cannot resolve; write \${#ARR} so the shell receives it`, true},
		{"already escaped", `echo \${OK:-1}`, "", false},
		{"an OmegaConf resolver", "${oc.env:HOME}", "", false},
		{"a profile key", "${image}", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := shellHint(&interp.Error{Path: "launch.entrypoint", Value: tc.value}, file)
			require.Equal(t, tc.ok, ok)
			require.Equal(t, tc.want, got)
		})
	}
}
