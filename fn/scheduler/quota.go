package scheduler

import (
	"math"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/placement"
)

// Demand sums the requests of every pod owned by an object that names a
// queue (referencedBy entries start with the object's "Kind/name"), each
// pod's requests as the API server defaults them (a limit without a
// request is the request): what Kueue's Workload counts and what KAI's
// PodGroup asks of its queue.
func Demand(pods []PodSet, referencedBy []string) corev1.ResourceList {
	owners := map[string]bool{}
	for _, r := range referencedBy {
		owner, _, _ := strings.Cut(r, " ")
		owners[owner] = true
	}
	total := corev1.ResourceList{}
	for _, s := range pods {
		if !owners[s.Object] {
			continue
		}
		for name, q := range placement.PodRequests(s.AsPod()) {
			if q.IsZero() {
				continue
			}
			q.Mul(s.Count)
			sum := total[name]
			sum.Add(q)
			total[name] = sum
		}
	}
	return total
}

// plainUpTo bounds what Amount writes plainly (its milli-units fit int64).
var plainUpTo = resource.MustParse("1P")

// Amount is a quantity as a person reads it, in every quota line of every
// integration: a whole count of a decimal resource plainly (1000 cpu, not
// 1k), anything else as Kubernetes writes it.
func Amount(q resource.Quantity) string {
	if q.Format == resource.DecimalSI && q.Cmp(plainUpTo) < 0 && q.MilliValue()%1000 == 0 {
		return strconv.FormatInt(q.Value(), 10)
	}
	return q.String()
}

// Int32Of is a JSON number of a server's answer (a priority's value) as
// the int32 the API declares, if it is one.
func Int32Of(v any) (int32, bool) {
	n, ok := v.(int64)
	if !ok || n < math.MinInt32 || n > math.MaxInt32 {
		return 0, false
	}
	return int32(n), true
}
