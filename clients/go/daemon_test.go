// SPDX-License-Identifier: Apache-2.0

// Starts a real tabletheoryd (memory backend) for the tests: TT_DAEMON or ../../_build/tabletheoryd.

package tabletheoryd

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

type testDaemon struct {
	cmd  *exec.Cmd
	URL  string
	logs string
}

func daemonPath() string {
	if p := os.Getenv("TT_DAEMON"); p != "" {
		return p
	}
	p, _ := filepath.Abs("../../_build/tabletheoryd")
	return p
}

// startDaemon runs the daemon on 127.0.0.1:0 and waits for its daemon.ready log line.
func startDaemon(extra ...string) (*testDaemon, error) {
	return startDaemonListen("127.0.0.1:0", extra...)
}

// startDaemonListen runs the daemon on listen (host:port or unix:/path).
func startDaemonListen(listen string, extra ...string) (*testDaemon, error) {
	models, _ := filepath.Abs("testdata/models")
	args := append([]string{"--listen", listen, "--models", models}, extra...)
	logf, err := os.CreateTemp("", "ttd-go-log-")
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(daemonPath(), args...)
	cmd.Env = []string{}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TABLETHEORYD_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Stderr = logf
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", daemonPath(), err)
	}
	d := &testDaemon{cmd: cmd, logs: logf.Name()}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		f, _ := os.Open(logf.Name())
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var line map[string]any
			if json.Unmarshal(sc.Bytes(), &line) == nil && line["event"] == "daemon.ready" {
				f.Close()
				d.URL = line["listen"].(string)
				if !strings.HasPrefix(d.URL, "unix:") {
					d.URL = "http://" + d.URL
				}
				return d, nil
			}
		}
		f.Close()
		if cmd.ProcessState != nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	b, _ := os.ReadFile(logf.Name())
	d.stop()
	return nil, fmt.Errorf("daemon not ready: %s", b)
}

func (d *testDaemon) stop() {
	if d.cmd.Process != nil {
		_ = d.cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = d.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = d.cmd.Process.Kill()
		}
	}
	os.Remove(d.logs)
}

var shared *testDaemon

func TestMain(m *testing.M) {
	var err error
	shared, err = startDaemon("--enable-fault-injection")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	shared.stop()
	os.Exit(code)
}
