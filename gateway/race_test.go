//go:build race

package gateway

// raceEnabled: the race detector slows the engine several times, which
// the measurements (not the behaviour tests) are not made for.
const raceEnabled = true
