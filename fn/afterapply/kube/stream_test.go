package kube

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"
)

const logPath = "/proxy/c1/api/v1/namespaces/ml/pods/p/log"

// status is a Status answer of code and reason.
func status(code int, reason string) func(http.ResponseWriter, *http.Request) {
	return answer(code, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"`+reason+`","message":"m","code":`+strconv.Itoa(code)+`}`)
}

// A Pod's log is asked for with its query and read as it comes, past the
// connection's timeout, which bounds only the wait for the answer's
// headers; a Pod gone or a container not started is ErrNoLog, any other
// refusal is classified as every read's is, and a redirect is not followed.
func TestPodLog(t *testing.T) {
	const timeout = 300 * time.Millisecond
	cases := []struct {
		name   string
		pod    string
		answer func(http.ResponseWriter, *http.Request)
		want   string // the body read
		err    error
		msg    string
	}{
		{name: "the log, read past the timeout", pod: "p", answer: func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte("early\n"))
			w.(http.Flusher).Flush()
			time.Sleep(2 * timeout)
			_, _ = w.Write([]byte("late\n"))
		}, want: "early\nlate\n"},
		{name: "a Pod gone", pod: "p", answer: status(404, "NotFound"), err: ErrNoLog, msg: "no log to read: Pod p is gone: "},
		{name: "a container not started", pod: "p", answer: status(400, "BadRequest"), err: ErrNoLog},
		{name: "refused", pod: "p", answer: status(403, "Forbidden"), err: ErrAccess},
		{name: "a server error", pod: "p", answer: answer(500, "boom"), err: ErrServer},
		{name: "a redirect", pod: "p", answer: func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://elsewhere.invalid/", http.StatusFound)
		}, err: ErrRedirect},
		{name: "no answer within the timeout", pod: "p", answer: func(http.ResponseWriter, *http.Request) { time.Sleep(2 * timeout) },
			err: ErrUnreachable, msg: "GET /api/v1/namespaces/ml/pods/p/log: no answer within 300ms"},
		{name: "a name that is not one path segment", pod: "a/b", answer: answer(200, "")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var asked *http.Request
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				asked = r
				if r.URL.Path == logPath {
					tc.answer(w, r)
				}
			}))
			t.Cleanup(srv.Close)
			c, err := FromConfig(&rest.Config{Host: srv.URL + "/proxy/c1"}, "", Options{Timeout: timeout})
			require.NoError(t, err)
			body, err := c.PodLog(context.Background(), "ml", tc.pod, url.Values{"tailLines": {"10"}, "container": {"c"}, "follow": {"true"}})
			if tc.pod != "p" {
				require.Error(t, err)
				require.Nil(t, asked, "not sent")
				return
			}
			if tc.err != nil {
				require.ErrorIs(t, err, tc.err)
				require.ErrorContains(t, err, tc.msg)
				return
			}
			require.NoError(t, err)
			b, err := io.ReadAll(body)
			require.NoError(t, err)
			require.NoError(t, body.Close())
			require.Equal(t, tc.want, string(b))
			require.Equal(t, "container=c&follow=true&tailLines=10", asked.URL.RawQuery)
			require.Equal(t, "text/plain", asked.Header.Get("Accept"))
		})
	}
}

// Closing the body of a followed log ends the request.
func TestPodLogCloseEndsTheRequest(t *testing.T) {
	ended := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("x\n"))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
			close(ended)
		case <-time.After(5 * time.Second):
		}
	}))
	t.Cleanup(srv.Close)
	c, err := FromConfig(&rest.Config{Host: srv.URL}, "", Options{})
	require.NoError(t, err)
	body, err := c.PodLog(context.Background(), "ml", "p", nil)
	require.NoError(t, err)
	require.NoError(t, body.Close())
	select {
	case <-ended:
	case <-time.After(6 * time.Second):
		t.Fatal("the request goes on after Close")
	}
}
