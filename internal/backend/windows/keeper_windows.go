package windows

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/srt-go/srt/winsec"
)

// keeperRole, as srt's first argument, makes it a run's keeper; the
// second is the run's spec file, which the keeper reads and removes.
const keeperRole = "__srt-windows-keeper"

// keeperSpec is what a keeper runs: the command, where, with what
// environment, and srt's pid, whose end ends the command's job.
type keeperSpec struct {
	Argv   []string `json:"argv"`
	Dir    string   `json:"dir"`
	Env    []string `json:"env"`
	Parent int      `json:"parent"`
}

// MaybeRunKeeper runs the keeper when this process was started as one,
// and never returns then; otherwise it returns at once. The keeper
// exits with the command's exit code, or 1 when the command could not
// start or srt ended first.
func MaybeRunKeeper() {
	if len(os.Args) != 3 || os.Args[1] != keeperRole {
		return
	}
	data, err := os.ReadFile(os.Args[2])
	os.Remove(os.Args[2])
	var spec keeperSpec
	if err == nil {
		err = json.Unmarshal(data, &spec)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "srt: the keeper's spec: %v\n", err)
		os.Exit(1)
	}
	code, err := winsec.Keep(winsec.DefaultJob(), winsec.Command{Argv: spec.Argv, Dir: spec.Dir, Env: spec.Env,
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}, spec.Parent)
	if err != nil {
		fmt.Fprintf(os.Stderr, "srt: %v\n", err)
	}
	os.Exit(code)
}
