package main

import (
	"math"
	"slices"
	"time"
)

// A record is one measurement: one phase of one server in one
// repetition. The driver writes each as a JSON line.
type record struct {
	Rep    int    `json:"rep"`
	Server string `json:"server"`
	Label  string `json:"label"`
	Phase  string `json:"phase"`
	// NA says why the phase does not apply to this server; nothing
	// else is set then.
	NA string `json:"na,omitempty"`

	N         int            `json:"n,omitempty"`
	OK        int            `json:"ok,omitempty"`
	Errors    map[string]int `json:"errors,omitempty"`
	Failed    string         `json:"failed,omitempty"` // the phase stopped early: why
	Clients   int            `json:"clients,omitempty"`
	ElapsedS  float64        `json:"elapsed_s,omitempty"`
	RPS       float64        `json:"rps,omitempty"`
	P50Ms     float64        `json:"p50_ms,omitempty"`
	P90Ms     float64        `json:"p90_ms,omitempty"`
	P99Ms     float64        `json:"p99_ms,omitempty"`
	MaxMs     float64        `json:"max_ms,omitempty"`
	MeanMs    float64        `json:"mean_ms,omitempty"`
	CPUUsPer  float64        `json:"cpu_us_per_req,omitempty"`
	CPUSource string         `json:"cpu_source,omitempty"`
	// DriverCPUUsPer is the driver's own CPU per request: when it and
	// the server's add up to both cores, the driver sets the pace.
	DriverCPUUsPer float64        `json:"driver_cpu_us_per_req,omitempty"`
	OutOfOrder     int            `json:"out_of_order,omitempty"`
	NewConns       int64          `json:"new_conns,omitempty"`
	RSSPeakKB      int64          `json:"rss_peak_kb,omitempty"`
	StartupMs      float64        `json:"startup_ms,omitempty"`
	Protocol       string         `json:"protocol,omitempty"`
	Replies        map[string]int `json:"replies,omitempty"` // HTTP answers by content type
	ServerMsgs     int            `json:"server_msgs,omitempty"`
	Sessions       int            `json:"sessions,omitempty"`
	RSSBeforeK     int64          `json:"rss_before_kb,omitempty"`
	RSSAfterK      int64          `json:"rss_after_kb,omitempty"`
	SessionKB      float64        `json:"session_kb,omitempty"`
	Tools          int            `json:"tools,omitempty"`
	Pages          int            `json:"pages,omitempty"`
	Load           string         `json:"load,omitempty"`
}

func (r *record) errorCount() int {
	n := 0
	for _, v := range r.Errors {
		n += v
	}
	return n
}

func (r *record) addError(kind string) {
	if r.Errors == nil {
		r.Errors = map[string]int{}
	}
	r.Errors[kind]++
}

// latencies sets the percentiles from a phase's round-trip times.
func (r *record) latencies(lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	s := slices.Clone(lat)
	slices.Sort(s)
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	pct := func(p float64) float64 {
		i := int(math.Ceil(p*float64(len(s)))) - 1
		return ms(s[max(0, min(i, len(s)-1))])
	}
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	r.P50Ms, r.P90Ms, r.P99Ms = pct(0.50), pct(0.90), pct(0.99)
	r.MaxMs = ms(s[len(s)-1])
	r.MeanMs = ms(sum) / float64(len(s))
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
