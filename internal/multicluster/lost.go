package multicluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nemo-rl-krm/nemo-rl-krm/internal/kueue"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/operator"
)

// relay is the TCP path from the manager's Kueue to a worker's API server
// (the worker's kubeconfig Secret names it): cutting it is a worker that
// stops answering, whose open watches end, as when its API server is
// gone; resuming it on the same address brings the worker back, so the
// fleet can be reused. (Rewriting the Secret to a dead address is not the
// same: Kueue then keeps the failing client in use, and never takes the
// lost-worker path.) TLS passes through untouched.
type relay struct {
	target string
	mu     sync.Mutex
	ln     net.Listener
	addr   string
	conns  map[net.Conn]bool
}

// newRelay listens on a free loopback port and forwards to target
// (host:port).
func newRelay(target string) (*relay, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &relay{target: target, addr: ln.Addr().String(), conns: map[net.Conn]bool{}}
	r.serve(ln)
	return r, nil
}

func (r *relay) serve(ln net.Listener) {
	r.mu.Lock()
	r.ln = ln
	r.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return // cut
			}
			go r.forward(c)
		}
	}()
}

func (r *relay) forward(c net.Conn) {
	up, err := net.Dial("tcp", r.target)
	if err != nil {
		_ = c.Close()
		return
	}
	r.mu.Lock()
	if r.ln == nil { // cut meanwhile
		r.mu.Unlock()
		_, _ = c.Close(), up.Close()
		return
	}
	r.conns[c], r.conns[up] = true, true
	r.mu.Unlock()
	var wg sync.WaitGroup
	wg.Add(2)
	pipe := func(dst, src net.Conn) {
		defer wg.Done()
		_, _ = io.Copy(dst, src)
		_, _ = dst.Close(), src.Close()
	}
	go pipe(up, c)
	go pipe(c, up)
	wg.Wait()
	r.mu.Lock()
	delete(r.conns, c)
	delete(r.conns, up)
	r.mu.Unlock()
}

// cut closes the listener and every open connection.
func (r *relay) cut() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ln != nil {
		_ = r.ln.Close()
		r.ln = nil
	}
	for c := range r.conns {
		_ = c.Close()
		delete(r.conns, c)
	}
}

// resume listens on the relay's address again.
func (r *relay) resume() error {
	ln, err := net.Listen("tcp", r.addr)
	if err != nil {
		return fmt.Errorf("relay %s: %w", r.addr, err)
	}
	r.serve(ln)
	return nil
}

// viaRelay is kubeconfig kc with its server at a new relay to it.
func viaRelay(kc []byte) (*relay, []byte, error) {
	cfg, err := clientcmd.Load(kc)
	if err != nil {
		return nil, nil, err
	}
	var r *relay
	for _, c := range cfg.Clusters {
		u, err := url.Parse(c.Server)
		if err != nil {
			return nil, nil, err
		}
		if r == nil {
			if r, err = newRelay(u.Host); err != nil {
				return nil, nil, err
			}
		}
		u.Host = r.addr
		c.Server = u.String()
	}
	if r == nil {
		return nil, nil, errors.New("kubeconfig without a cluster")
	}
	out, err := clientcmd.Write(*cfg)
	if err != nil {
		r.cut()
		return nil, nil, err
	}
	return r, out, nil
}

// ClusterActive reads the Active condition of worker's MultiKueueCluster
// on the manager (the state and its reason and message).
func (f *Fleet) ClusterActive(ctx context.Context, worker string) (bool, string, error) {
	return activeCondition(ctx, f.Manager.Env, "MultiKueueCluster", worker)
}

// Lose makes worker w stop answering the manager: its relay is cut.
// restore resumes it, nudges the manager's Kueue to reconnect at once
// (an annotation on the kubeconfig Secret; its own retry backs off to
// minutes) and waits until the MultiKueueCluster is active again.
func (f *Fleet) Lose(w int) (restore func(context.Context, time.Duration) error) {
	r := f.relays[w]
	r.cut()
	name := f.Workers[w].Name
	return func(ctx context.Context, timeout time.Duration) error {
		if err := r.resume(); err != nil {
			return err
		}
		m := f.Manager.Env
		var s corev1.Secret
		if err := m.Client.Get(ctx, client.ObjectKey{Namespace: kueue.Namespace, Name: name + "-kubeconfig"}, &s); err != nil {
			return err
		}
		s.SetAnnotations(map[string]string{"nrl.test/reconnect": time.Now().UTC().Format(time.RFC3339Nano)})
		if err := m.Client.Update(ctx, &s); err != nil {
			return err
		}
		return operator.Wait(ctx, timeout, "MultiKueueCluster "+name+" active again", func(ctx context.Context) (bool, string, error) {
			return f.ClusterActive(ctx, name)
		})
	}
}
