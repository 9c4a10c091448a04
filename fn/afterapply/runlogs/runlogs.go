// Package runlogs prints a run's Pods' logs, read-only, for `nrl-k8s logs`:
// the Pods the run's RayClusters own (runstatus.ClusterPods, the rule
// status reads them by), head and/or workers by KubeRay's ray.io/node-type
// label, each line prefixed with its Pod's name. The log is the cluster's
// text, as hostile as any answer: every line is escaped (fn/support/safetext:
// control characters, ANSI escapes), cut at MaxLineBytes, and without
// --follow the whole read is bounded in bytes (MaxBytes) and time.
package runlogs

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/kube"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/runstatus"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/safetext"
)

// Options say whose logs to print and how.
type Options struct {
	Namespace, Run string
	// Role is "head", "worker" or "" (both): KubeRay's ray.io/node-type.
	Role string
	// Container is the container to read, "" for each Pod's first (the
	// Ray container in KubeRay's Pods).
	Container string
	// Tail is how many of the last lines to read per Pod, -1 for all.
	Tail int64
	// Follow streams until ctx ends or every Pod's log ends (the Pods go).
	Follow bool
	// Out receives the lines, Log what the command says about itself.
	Out, Log io.Writer
	// MaxBytes bounds a read without Follow (default and most: MaxBytes).
	MaxBytes int64
}

// Bounds.
const (
	// MaxLineBytes is the longest line printed; the rest of it is cut.
	MaxLineBytes = 16 << 10
	// MaxBytes bounds what a read without --follow reads, every Pod
	// together (sent as each request's limitBytes, and counted).
	MaxBytes = 64 << 20
	// MaxFollowed is how many Pods one --follow streams at once.
	MaxFollowed = 64
)

// ErrNoPods is the error when the run has no Pod to read.
var ErrNoPods = errors.New("no Pods")

// Print prints the logs. A refused read (401, 403) is an error wrapping
// kube.ErrAccess that names the access needed; a Pod whose log cannot be
// read (gone, not started) is said on o.Log and the others are read.
func Print(ctx context.Context, c *kube.Conn, o Options) error {
	all, notes, err := runstatus.ClusterPods(ctx, c, o.Namespace, o.Run)
	if err != nil {
		return err
	}
	for _, n := range notes {
		fmt.Fprintf(o.Log, "logs: %s\n", safetext.Inline(n))
	}
	var pods []unstructured.Unstructured
	for _, p := range all {
		if o.Role == "" || p.GetLabels()[vocab.RayNodeTypeLabel] == o.Role {
			pods = append(pods, p)
		}
	}
	if len(pods) == 0 {
		role := ""
		if o.Role != "" {
			role = " " + o.Role
		}
		return fmt.Errorf("%w: run %s has no%s Pods of its RayClusters in namespace %s", ErrNoPods, o.Run, role, o.Namespace)
	}
	out := &lines{w: o.Out}
	if !o.Follow {
		budget := int64(MaxBytes)
		if o.MaxBytes > 0 {
			budget = min(budget, o.MaxBytes)
		}
		total := budget
		for i := range pods {
			err := readPod(ctx, c, o, &pods[i], out, &budget)
			if ctx.Err() != nil {
				return context.Cause(ctx) // the time bound, or interrupted
			}
			if err != nil {
				return err
			}
			if budget <= 0 {
				fmt.Fprintf(o.Log, "logs: stopped after %d bytes of logs; --tail N reads fewer lines per Pod\n", total)
				return nil
			}
		}
		return nil
	}
	if len(pods) > MaxFollowed {
		return fmt.Errorf("run %s has %d Pods; --follow streams at most %d at once: pick --role head or --role worker", o.Run, len(pods), MaxFollowed)
	}
	return follow(ctx, c, o, pods, out)
}

// follow streams every Pod's log at once until each ends or ctx does
// (interrupted: a clean end). A refusal or a failed server ends them all.
func follow(ctx context.Context, c *kube.Conn, o Options, pods []unstructured.Unstructured, out *lines) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	for i := range pods {
		wg.Go(func() {
			if err := readPod(ctx, c, o, &pods[i], out, nil); err != nil {
				cancel(err)
			}
		})
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

// readPod prints one Pod's log. budget, when set, is what may still be
// read (without --follow) and is decreased by what was.
func readPod(ctx context.Context, c *kube.Conn, o Options, u *unstructured.Unstructured, out *lines, budget *int64) error {
	var p corev1.Pod
	if err := kube.Decode(u, &p); err != nil {
		return fmt.Errorf("reading Pod %s: %w", u.GetName(), err)
	}
	container := o.Container
	if container == "" && len(p.Spec.Containers) > 0 {
		container = p.Spec.Containers[0].Name
	}
	q := url.Values{}
	if container != "" {
		q.Set("container", container)
	}
	if o.Tail >= 0 {
		q.Set("tailLines", strconv.FormatInt(o.Tail, 10))
	}
	if o.Follow {
		q.Set("follow", "true")
	}
	if budget != nil {
		q.Set("limitBytes", strconv.FormatInt(*budget, 10))
	}
	body, err := c.PodLog(ctx, o.Namespace, p.Name, q)
	switch {
	case errors.Is(err, kube.ErrNoLog):
		fmt.Fprintf(o.Log, "logs: Pod %s: %s\n", safetext.Inline(p.Name), safetext.Inline(err.Error()))
		return nil
	case errors.Is(err, kube.ErrAccess):
		return fmt.Errorf("%w: reading the log of Pod %s needs get on pods/log in namespace %s", err, p.Name, o.Namespace)
	case err != nil:
		return err
	}
	defer func() { _ = body.Close() }() // a read-only answer: nothing to flush
	var r io.Reader = body
	if budget != nil {
		r = io.LimitReader(body, *budget)
	}
	n, err := copyLines(out, safetext.Inline(p.Name), r)
	if budget != nil {
		*budget -= n
	}
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("%w: reading the log of Pod %s: %w", kube.ErrServer, p.Name, err)
	}
	return nil
}

// lines writes whole lines, one writer at a time (followed Pods write
// together).
type lines struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lines) line(prefix, text string, cut bool) error {
	s := "[" + prefix + "] " + safetext.Inline(text)
	if cut {
		s += fmt.Sprintf(" [line cut at %d bytes]", MaxLineBytes)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	_, err := io.WriteString(l.w, s+"\n")
	return err
}

// copyLines prints r's lines, each escaped and cut at MaxLineBytes (the
// rest of a longer line is read and dropped, never held), and returns
// the bytes read.
func copyLines(out *lines, prefix string, r io.Reader) (int64, error) {
	br := bufio.NewReaderSize(r, MaxLineBytes)
	var n int64
	dropping := false
	for {
		chunk, err := br.ReadSlice('\n')
		n += int64(len(chunk))
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			if !dropping {
				if werr := out.line(prefix, string(chunk), true); werr != nil {
					return n, werr
				}
			}
			dropping = true
			continue
		case dropping:
			dropping = false // the end of a line already printed cut
		case len(chunk) > 0:
			text := chunk
			if text[len(text)-1] == '\n' {
				text = text[:len(text)-1]
			}
			if len(text) > 0 && text[len(text)-1] == '\r' {
				text = text[:len(text)-1]
			}
			if werr := out.line(prefix, string(text), false); werr != nil {
				return n, werr
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return n, nil
			}
			return n, err
		}
	}
}
