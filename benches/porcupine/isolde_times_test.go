// isolde's timing driver for Porcupine, run by scripts/bench-jepsen.sh.
//
// It is no part of Porcupine and holds none of Porcupine's code: the script
// copies this file into a scratch copy of Porcupine's own source (cloned
// from github.com/anishathalye/porcupine, never vendored) and runs it there
// as `go test -run '^TestIsoldeTimes$'`, so that it checks each log with
// porcupine_test.go's own etcd model and Jepsen log parser (`etcdModel`,
// `parseJepsenLog`). Reads the logs named in ISOLDE_LOGS (one path a line,
// relative to ISOLDE_ROOT unless absolute) and writes one line per log to
// the file ISOLDE_OUT: `file <TAB> linearizable <TAB> seconds`, the file as
// named, parsing excluded.
package porcupine

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestIsoldeTimes(t *testing.T) {
	logs, root, out := os.Getenv("ISOLDE_LOGS"), os.Getenv("ISOLDE_ROOT"), os.Getenv("ISOLDE_OUT")
	if logs == "" || out == "" {
		t.Skip("ISOLDE_LOGS and ISOLDE_OUT unset: run by isolde's scripts/bench-jepsen.sh")
	}
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, log := range strings.Split(strings.TrimSpace(logs), "\n") {
		path := log
		if !filepath.IsAbs(path) {
			path = filepath.Join(root, path)
		}
		events := parseJepsenLog(path)
		t0 := time.Now()
		res := CheckEvents(etcdModel, events)
		fmt.Fprintf(f, "%s\t%t\t%.6f\n", log, res, time.Since(t0).Seconds())
	}
}
