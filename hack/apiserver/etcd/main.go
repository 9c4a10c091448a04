// Command etcd is etcd's server main (go.etcd.io/etcd/server/v3/etcdmain),
// linked here because etcd's own cmd lives in a module of its own.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
