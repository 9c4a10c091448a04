package multicluster

import (
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Kubeconfig writes into dir one kubeconfig holding a context per cluster
// of the fleet, named as the cluster is ("manager", "worker-1", ...), each
// with the cluster's admin credentials: a user's kubeconfig for the fleet,
// as `nrl-k8s preflight --context manager --worker worker-1=worker-1` reads
// it. The current context is the manager's.
func (f *Fleet) Kubeconfig(dir string) (string, error) {
	out := clientcmdapi.NewConfig()
	for _, c := range append([]Cluster{f.Manager}, f.Workers...) {
		sub := filepath.Join(dir, c.Name)
		if err := os.MkdirAll(sub, 0o700); err != nil {
			return "", err
		}
		file, err := c.Env.Server.WriteKubeconfig(sub)
		if err != nil {
			return "", err
		}
		cfg, err := clientcmd.LoadFromFile(file)
		if err != nil {
			return "", fmt.Errorf("the kubeconfig of %s: %w", c.Name, err)
		}
		ctx := cfg.Contexts[cfg.CurrentContext]
		if ctx == nil || cfg.Clusters[ctx.Cluster] == nil || cfg.AuthInfos[ctx.AuthInfo] == nil {
			return "", fmt.Errorf("the kubeconfig of %s: no current context", c.Name)
		}
		out.Clusters[c.Name] = cfg.Clusters[ctx.Cluster]
		out.AuthInfos[c.Name] = cfg.AuthInfos[ctx.AuthInfo]
		out.Contexts[c.Name] = &clientcmdapi.Context{Cluster: c.Name, AuthInfo: c.Name}
	}
	out.CurrentContext = f.Manager.Name
	file := filepath.Join(dir, "fleet.kubeconfig")
	return file, clientcmd.WriteToFile(*out, file)
}
