package build

// Upper bounds on what one cluster may ask for: far above any real cluster
// (the largest GB300 deployments have a few thousand nodes), low enough that
// no sum over them overflows and a render never builds millions of objects
// (`segmentSize: 1` with 2^31 replicas would). check reports them; the
// builder refuses them too, so no entry point can get past them.
const (
	// MaxNodes is replicas × numOfHosts summed over a cluster's worker groups.
	MaxNodes = 100_000
	// MaxWorkerGroups is a cluster's worker groups after segment splitting.
	MaxWorkerGroups = 1_000
)
