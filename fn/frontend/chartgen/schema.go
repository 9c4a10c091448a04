package chartgen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/profile"
)

// schemaTemplate is values.schema.json; %[1]s is the profile enum, the rest
// are the patterns the engine's inputs must match for the chart's string
// substitution to be exact. Helm checks it at install, upgrade, template
// and lint, before any template runs; the template then checks what a
// schema cannot say clearly (required values, name lengths, the recipe).
const schemaTemplate = `{
  "$schema": "http://json-schema.org/draft-07/schema#",
  "title": "nemo-rl-run values",
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "global": {
      "description": "Helm passes the parent chart's global values to every subchart; this chart reads none of them, and accepts them so that it can be a dependency of an umbrella chart.",
      "type": "object"
    },
    "profile": {
      "description": "Packaged infra profile to run on (required). The chart README lists them.",
      "type": "string",
      "enum": %[1]s
    },
    "user": {
      "description": "Submitting user, as ${user:} in the profile (required): already normalised, i.e. a DNS label: lower case letters, digits and '-' ('_' and '.' become '-', as nrl-k8s normalises them).",
      "type": "string",
      "maxLength": 63,
      "pattern": %[2]s
    },
    "image": {
      "description": "Image of every container of the run's pods (Ray head and workers, the dev pod); in mode services, of the shared services' containers (as nrl-k8s render --only-deployments --image); empty: the profile's.",
      "type": "string",
      "maxLength": 512,
      "pattern": %[4]s
    },
    "labels": {
      "description": "Labels for every object and pod template of the run (as nrl-k8s render --label); keys the rendered objects already carry are refused.",
      "type": "object",
      "propertyNames": {"maxLength": 317, "pattern": %[5]s},
      "additionalProperties": {"type": "string", "maxLength": 63, "pattern": %[6]s}
    },
    "annotations": {
      "description": "Annotations for every object and pod template of the run (as nrl-k8s render --annotation); keys the rendered objects already carry are refused.",
      "type": "object",
      "propertyNames": {"maxLength": 317, "pattern": %[5]s},
      "additionalProperties": {"type": "string"}
    },
    "mode": {
      "description": "rayjob: one RayJob that creates and tears down its cluster; raycluster: long-lived RayClusters plus the RayJobs submitted to them; dev: the CPU-only dev pod; services: only the profile's deployments and their Services, shared by the user's runs, as a release of their own (nrl-k8s render --only-deployments; profiles with deployments).",
      "type": "string",
      "enum": ["rayjob", "raycluster", "dev", "services"]
    },
    "state": {
      "description": "The run's declared life, as nrl-k8s render --state: run, or stopped: rendered so that nothing starts it (the engine's stopped form: RayJob and RayCluster spec.suspend true and annotated %[14]s: stopped; an object Kueue admits, a RayJob submitted to a RayCluster and the dev pod left out; Deployments at 0 replicas). helm upgrade --set state=stopped stops a running run; state=run starts a stopped one again.",
      "type": "string",
      "enum": %[13]s
    },
    "namespace": {
      "description": "Namespace of every object; empty means the release namespace (helm --namespace).",
      "type": "string",
      "maxLength": 63,
      "pattern": %[2]s
    },
    "runId": {
      "description": "Run id: labels every object of the run; in raycluster mode it is the training job's submission id and is exported as NRL_K8S_RUN_ID.",
      "type": "string",
      "maxLength": 63,
      "pattern": %[2]s
    },
    "overrides": {
      "description": "Hydra overrides appended to the training driver call (key=value, +key=value, ++key=value, ~key); characters limited to A-Z a-z 0-9 _ @ %% + = : , . / ~ [ ] -.",
      "type": "array",
      "items": {
        "type": "string",
        "pattern": %[3]s
      }
    },
    "deployments": {
      "description": "false (the only value a release accepts; kept for values files of earlier charts): a run release never installs the profile's deployments and their Services (as nrl-k8s render --no-deployments); install them as a release of their own with mode services.",
      "type": "boolean"
    },
    "queue": {
      "description": "Queue of the run, as infra.scheduler.queue: for scheduler.kind kai the kai.scheduler/queue label of every object and pod template; for kind kueue the LocalQueue, the kueue.x-k8s.io/queue-name label of the RayJob (or RayCluster) Kueue admits (a DNS-1123 subdomain); empty: the profile's.",
      "type": "string",
      "maxLength": 63,
      "pattern": %[7]s
    },
    "kueueQueue": {
      "description": "Kueue LocalQueue of the run where KAI places and Kueue admits (profiles with scheduler: {kind: kai, kueue: {queue: ...}}), as infra.scheduler.kueue.queue: the kueue.x-k8s.io/queue-name label of the RayJob (or RayCluster) Kueue admits, beside the KAI queue (the queue value); a DNS-1123 subdomain; empty: the profile's.",
      "type": "string",
      "maxLength": 63,
      "pattern": %[8]s
    },
    "priorityClassName": {
      "description": "PriorityClass of every Ray pod of the run (heads and workers), as infra.scheduler.priorityClassName; empty: the profile's (none unless it sets one).",
      "type": "string",
      "maxLength": 253,
      "pattern": %[8]s
    },
    "workloadPriorityClass": {
      "description": "Kueue WorkloadPriorityClass of the run (profiles that name Kueue), as infra.scheduler.workloadPriorityClass (scheduler.kind kueue) or infra.scheduler.kueue.workloadPriorityClass (KAI places, Kueue admits): the kueue.x-k8s.io/priority-class label beside Kueue's queue label; empty: the profile's (none unless it sets one).",
      "type": "string",
      "maxLength": 63,
      "pattern": %[8]s
    },
    "nodeSelector": {
      "description": "Node labels added to every GPU worker's nodeSelector, as keys added to infra.placement.nodeSelector (heads and CPU groups are left alone); a key a GPU worker already selects with another value is refused.",
      "type": "object",
      "propertyNames": {"maxLength": 317, "pattern": %[5]s},
      "additionalProperties": {"type": "string", "maxLength": 63, "pattern": %[6]s}
    },
    "tolerations": {
      "description": "Tolerations appended to every GPU worker's, as entries appended to infra.placement.tolerations (operator defaults to Equal, effect to NoSchedule); one a GPU worker already has is refused.",
      "type": "array",
      "items": {
        "type": "object",
        "additionalProperties": false,
        "required": ["key"],
        "properties": {
          "key": {"type": "string", "maxLength": 317, "pattern": %[5]s},
          "operator": {"type": "string", "enum": %[9]s},
          "value": {"type": "string", "maxLength": 63, "pattern": %[6]s},
          "effect": {"type": "string", "enum": %[10]s},
          "tolerationSeconds": {"type": "integer"}
        }
      }
    },
    "env": {
      "description": "Environment variables added to every container of the run's Ray pods (after their own, in name order), as infra.env: a mapping NAME: value, or a list of {name, value}. Names a Ray container already sets are refused, and so are literal values under credential-looking names (reference a Secret in a profile instead).",
      "type": ["object", "array"],
      "propertyNames": {"pattern": %[11]s},
      "additionalProperties": {"type": "string"},
      "items": {
        "type": "object",
        "additionalProperties": false,
        "required": ["name"],
        "properties": {
          "name": {"type": "string", "pattern": %[11]s},
          "value": {"type": "string"}
        }
      }
    },
    "suspend": {
      "description": "RayJob spec.suspend (rayjob mode), as infra.launch.rayjob.suspend: true creates the RayJob without its cluster until it is resumed; null: the profile's.",
      "type": ["boolean", "null"]
    },
    "ttlSecondsAfterFinished": {
      "description": "RayJob spec.ttlSecondsAfterFinished (rayjob mode), as infra.launch.rayjob.ttlSecondsAfterFinished: seconds KubeRay keeps the finished RayJob; 0 removes it at once; null: the profile's.",
      "type": ["integer", "null"],
      "minimum": 0,
      "maximum": %[12]d
    },
    "test": {
      "description": "helm test: a hook Pod running nrl-k8s status for the release, with a read-only Role (README, \"helm test\"). Off by default: helm template output carries the hook objects when on.",
      "type": "object",
      "additionalProperties": false,
      "properties": {
        "enabled": {"description": "Render the helm test hook (ServiceAccount, Role, RoleBinding, Pod).", "type": "boolean"},
        "image": {"description": "The nrl-k8s image the hook runs (name:tag or name@sha256:digest).", "type": "string", "maxLength": 512, "pattern": %[4]s}
      }
    },
    "recipe": {
      "description": "A recipe the run ships and runs (--set-file recipe=FILE, rayjob mode), as launch.recipeSource: configMap renders it: a self-contained mapping without defaults: or infra: (nrl-k8s recipe-merge RECIPE prints the merged recipe); empty: the profile's paired recipe.",
      "type": "string"
    }
  }
}
`

// Patterns of the values the chart puts into the rendered data: none needs
// JSON escaping except annotation values, which the template writes with
// toJson as encoding/json writes them.
const (
	// ImagePattern is an image reference (name[:tag][@digest]), optional.
	ImagePattern = `^([a-z0-9]([-a-zA-Z0-9._:/]*[a-zA-Z0-9_])?(@sha256:[a-f0-9]{64})?)?$`
	// QualifiedNamePattern is a label or annotation key: [prefix/]name.
	QualifiedNamePattern = `^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$`
	// LabelValuePattern is a label value (possibly empty).
	LabelValuePattern = `^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$`
)

// optionalSubdomain is a PriorityClass name (a DNS-1123 subdomain) or empty.
var optionalSubdomain = "^(" + strings.TrimSuffix(strings.TrimPrefix(dns1123Sub, "^"), "$") + ")?$"

func list(items []string) string {
	b, _ := json.Marshal(items)
	return strings.ReplaceAll(string(b), ",", ", ")
}

// Schema renders values.schema.json for the index's profiles.
func Schema(idx *Index) ([]byte, error) {
	names := []string{""}
	for _, e := range idx.Profiles {
		names = append(names, e.Name)
	}
	enum, err := json.Marshal(names)
	if err != nil {
		return nil, err
	}
	q := func(s string) string {
		b, _ := json.Marshal(s)
		return string(b)
	}
	optionalName := "^(" + strings.TrimSuffix(strings.TrimPrefix(NamePattern, "^"), "$") + ")?$"
	raw := fmt.Sprintf(schemaTemplate, strings.ReplaceAll(string(enum), ",", ", "), q(optionalName), q(OverridePattern),
		q(ImagePattern), q(QualifiedNamePattern), q(LabelValuePattern), q(LabelValuePattern), q(optionalSubdomain),
		list(profile.Operators), list(profile.Effects), q(profile.EnvNamePattern), MaxTTL, list(stateMeta.States), stateMeta.Annotation)
	var buf bytes.Buffer
	if err := json.Indent(&buf, []byte(raw), "", "  "); err != nil {
		return nil, fmt.Errorf("values.schema.json: %w", err)
	}
	buf.WriteByte('\n')
	return buf.Bytes(), nil
}
