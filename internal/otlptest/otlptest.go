// Package otlptest is a real OTLP/HTTP receiver on loopback for tests:
// it decodes the protobuf ExportTraceServiceRequest and
// ExportMetricsServiceRequest that OpenTelemetry exporters send, so a
// test sees the spans and the histograms exactly as a collector would.
package otlptest

import (
	"compress/gzip"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	collectormetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// maxBody bounds one export request's body, compressed or not.
const maxBody = 16 << 20

// Span is one span as the receiver decoded it.
type Span struct {
	// TraceID, SpanID and ParentID are in hex; ParentID is "" for a root.
	TraceID, SpanID, ParentID string
	Name                      string
	// Kind is the span's kind: "server", "client", "internal",
	// "producer" or "consumer".
	Kind string
	// Attributes holds each attribute's value as a string (a number in
	// decimal, a bool as true or false).
	Attributes map[string]string
	// StatusCode is "unset", "ok" or "error"; StatusMessage its message.
	StatusCode, StatusMessage string
	// Events are the names of the span's events, in order.
	Events []string
	// Scope is the name of the instrumentation scope.
	Scope string
	// Resource holds the attributes of the span's resource.
	Resource map[string]string
}

// Histogram is one data point of a histogram as the receiver decoded it.
type Histogram struct {
	// Name is the metric's name, Unit its unit.
	Name, Unit string
	// Attributes holds the point's attributes as strings, as Span's.
	Attributes map[string]string
	Count      uint64
	Sum        float64
	Bounds     []float64
	// ExemplarTraceIDs are the trace ids (hex) of the point's exemplars.
	ExemplarTraceIDs []string
	// Resource holds the attributes of the metric's resource.
	Resource map[string]string
}

// Receiver accepts OTLP/HTTP trace and metric exports on loopback.
type Receiver struct {
	srv *httptest.Server

	mu      sync.Mutex
	spans   []Span
	hists   []Histogram
	changed chan struct{} // closed and replaced when anything is added
}

// NewReceiver starts a receiver that ends with the test.
func NewReceiver(t testing.TB) *Receiver {
	r := &Receiver{changed: make(chan struct{})}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

// Endpoint returns the receiver's base URL, http://127.0.0.1:PORT, as
// OTEL_EXPORTER_OTLP_ENDPOINT takes it; traces go to Endpoint()+"/v1/traces",
// metrics to Endpoint()+"/v1/metrics".
func (r *Receiver) Endpoint() string { return r.srv.URL }

// Spans returns the spans received so far, in the order received.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.spans...)
}

// WaitFor waits until at least n spans have been received, or bound has
// passed (a bound on a hang), and returns the spans received.
func (r *Receiver) WaitFor(n int, bound time.Duration) ([]Span, error) {
	deadline := time.NewTimer(bound)
	defer deadline.Stop()
	for {
		r.mu.Lock()
		got, changed := len(r.spans), r.changed
		r.mu.Unlock()
		if got >= n {
			return r.Spans(), nil
		}
		select {
		case <-changed:
		case <-deadline.C:
			return r.Spans(), fmt.Errorf("otlptest: %d spans received after %v, want %d", got, bound, n)
		}
	}
}

// Histograms returns the histogram points received so far, in the order
// received: each export of a cumulative histogram adds its points again.
func (r *Receiver) Histograms() []Histogram {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Histogram(nil), r.hists...)
}

// WaitForHistogram waits until a point of the histogram name has been
// received for which match (nil: any) is true, or bound has passed (a
// bound on a hang), and returns the last such point.
func (r *Receiver) WaitForHistogram(name string, match func(Histogram) bool, bound time.Duration) (Histogram, error) {
	deadline := time.NewTimer(bound)
	defer deadline.Stop()
	for {
		r.mu.Lock()
		changed := r.changed
		r.mu.Unlock()
		hs := r.Histograms()
		for i := len(hs) - 1; i >= 0; i-- {
			if hs[i].Name == name && (match == nil || match(hs[i])) {
				return hs[i], nil
			}
		}
		select {
		case <-changed:
		case <-deadline.C:
			return Histogram{}, fmt.Errorf("otlptest: no matching %s point received after %v", name, bound)
		}
	}
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost || (req.URL.Path != "/v1/traces" && req.URL.Path != "/v1/metrics") {
		http.Error(w, "otlptest: only POST /v1/traces and /v1/metrics are served", http.StatusNotFound)
		return
	}
	if ct := req.Header.Get("Content-Type"); ct != "application/x-protobuf" {
		http.Error(w, "otlptest: Content-Type must be application/x-protobuf, not "+strconv.Quote(ct), http.StatusUnsupportedMediaType)
		return
	}
	var body io.Reader = http.MaxBytesReader(w, req.Body, maxBody)
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(body)
		if err != nil {
			http.Error(w, "otlptest: bad gzip body: "+err.Error(), http.StatusBadRequest)
			return
		}
		defer zr.Close()
		body = io.LimitReader(zr, maxBody)
	}
	raw, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, "otlptest: reading the body: "+err.Error(), http.StatusBadRequest)
		return
	}
	var out []byte
	if req.URL.Path == "/v1/metrics" {
		var msg collectormetrics.ExportMetricsServiceRequest
		if err := proto.Unmarshal(raw, &msg); err != nil {
			http.Error(w, "otlptest: not an ExportMetricsServiceRequest: "+err.Error(), http.StatusBadRequest)
			return
		}
		r.addHistograms(decodeMetrics(&msg))
		out, _ = proto.Marshal(&collectormetrics.ExportMetricsServiceResponse{})
	} else {
		var msg collectortrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(raw, &msg); err != nil {
			http.Error(w, "otlptest: not an ExportTraceServiceRequest: "+err.Error(), http.StatusBadRequest)
			return
		}
		r.add(decode(&msg))
		out, _ = proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(out)
}

func (r *Receiver) addHistograms(hs []Histogram) {
	if len(hs) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hists = append(r.hists, hs...)
	close(r.changed)
	r.changed = make(chan struct{})
}

// decodeMetrics returns the histogram points of msg; other kinds of
// metric are left out.
func decodeMetrics(msg *collectormetrics.ExportMetricsServiceRequest) []Histogram {
	var out []Histogram
	for _, rm := range msg.GetResourceMetrics() {
		res := attributes(rm.GetResource().GetAttributes())
		for _, sm := range rm.GetScopeMetrics() {
			for _, m := range sm.GetMetrics() {
				h, ok := m.GetData().(*metricspb.Metric_Histogram)
				if !ok {
					continue
				}
				for _, dp := range h.Histogram.GetDataPoints() {
					p := Histogram{Name: m.GetName(), Unit: m.GetUnit(), Attributes: attributes(dp.GetAttributes()),
						Count: dp.GetCount(), Sum: dp.GetSum(), Bounds: dp.GetExplicitBounds(), Resource: res}
					for _, e := range dp.GetExemplars() {
						if id := e.GetTraceId(); len(id) > 0 {
							p.ExemplarTraceIDs = append(p.ExemplarTraceIDs, hex.EncodeToString(id))
						}
					}
					out = append(out, p)
				}
			}
		}
	}
	return out
}

func (r *Receiver) add(spans []Span) {
	if len(spans) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.spans = append(r.spans, spans...)
	close(r.changed)
	r.changed = make(chan struct{})
}

func decode(msg *collectortrace.ExportTraceServiceRequest) []Span {
	var out []Span
	for _, rs := range msg.GetResourceSpans() {
		res := attributes(rs.GetResource().GetAttributes())
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				out = append(out, span(s, ss.GetScope().GetName(), res))
			}
		}
	}
	return out
}

func span(s *tracepb.Span, scope string, res map[string]string) Span {
	sp := Span{
		TraceID:       hex.EncodeToString(s.GetTraceId()),
		SpanID:        hex.EncodeToString(s.GetSpanId()),
		ParentID:      hex.EncodeToString(s.GetParentSpanId()),
		Name:          s.GetName(),
		Kind:          kinds[s.GetKind()],
		Attributes:    attributes(s.GetAttributes()),
		StatusCode:    statuses[s.GetStatus().GetCode()],
		StatusMessage: s.GetStatus().GetMessage(),
		Scope:         scope,
		Resource:      res,
	}
	for _, e := range s.GetEvents() {
		sp.Events = append(sp.Events, e.GetName())
	}
	return sp
}

var kinds = map[tracepb.Span_SpanKind]string{
	tracepb.Span_SPAN_KIND_UNSPECIFIED: "unspecified",
	tracepb.Span_SPAN_KIND_INTERNAL:    "internal",
	tracepb.Span_SPAN_KIND_SERVER:      "server",
	tracepb.Span_SPAN_KIND_CLIENT:      "client",
	tracepb.Span_SPAN_KIND_PRODUCER:    "producer",
	tracepb.Span_SPAN_KIND_CONSUMER:    "consumer",
}

var statuses = map[tracepb.Status_StatusCode]string{
	tracepb.Status_STATUS_CODE_UNSET: "unset",
	tracepb.Status_STATUS_CODE_OK:    "ok",
	tracepb.Status_STATUS_CODE_ERROR: "error",
}

func attributes(kvs []*commonpb.KeyValue) map[string]string {
	out := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		out[kv.GetKey()] = value(kv.GetValue())
	}
	return out
}

func value(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return strconv.FormatInt(x.IntValue, 10)
	case *commonpb.AnyValue_BoolValue:
		return strconv.FormatBool(x.BoolValue)
	case *commonpb.AnyValue_DoubleValue:
		return strconv.FormatFloat(x.DoubleValue, 'g', -1, 64)
	case *commonpb.AnyValue_ArrayValue:
		s := "["
		for i, e := range x.ArrayValue.GetValues() {
			if i > 0 {
				s += ","
			}
			s += value(e)
		}
		return s + "]"
	default:
		return fmt.Sprint(v)
	}
}
