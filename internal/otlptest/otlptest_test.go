package otlptest

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"testing"
	"time"

	collectormetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

const waitFor = 10 * time.Second // a bound on a hang

func TestTheReceiverDecodesExportsAndRefusesWhatIsNotOne(t *testing.T) {
	export, err := proto.Marshal(&collectortrace.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{
		ScopeSpans: []*tracepb.ScopeSpans{{Spans: []*tracepb.Span{{
			TraceId: bytes.Repeat([]byte{1}, 16), SpanId: bytes.Repeat([]byte{2}, 8),
			Name: "tools/call x", Kind: tracepb.Span_SPAN_KIND_SERVER,
			Status: &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR},
		}}}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	zw.Write(export)
	zw.Close()
	tests := []struct {
		name, path, contentType, encoding string
		body                              []byte
		status, spans                     int
	}{
		{"protobuf", "/v1/traces", "application/x-protobuf", "", export, http.StatusOK, 1},
		{"gzipped protobuf", "/v1/traces", "application/x-protobuf", "gzip", zipped.Bytes(), http.StatusOK, 1},
		{"not protobuf", "/v1/traces", "application/x-protobuf", "", []byte("\xff\xff\xff"), http.StatusBadRequest, 0},
		{"bad gzip", "/v1/traces", "application/x-protobuf", "gzip", export, http.StatusBadRequest, 0},
		{"JSON", "/v1/traces", "application/json", "", []byte("{}"), http.StatusUnsupportedMediaType, 0},
		{"logs", "/v1/logs", "application/x-protobuf", "", export, http.StatusNotFound, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewReceiver(t)
			req, _ := http.NewRequest(http.MethodPost, r.Endpoint()+tt.path, bytes.NewReader(tt.body))
			req.Header.Set("Content-Type", tt.contentType)
			if tt.encoding != "" {
				req.Header.Set("Content-Encoding", tt.encoding)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Errorf("status %d, want %d", resp.StatusCode, tt.status)
			}
			if tt.spans == 0 {
				if got := r.Spans(); len(got) != 0 {
					t.Errorf("spans %+v from a refused export", got)
				}
				return
			}
			spans, err := r.WaitFor(tt.spans, waitFor)
			if err != nil {
				t.Fatal(err)
			}
			s := spans[0]
			if s.TraceID != "01010101010101010101010101010101" || s.SpanID != "0202020202020202" || s.ParentID != "" ||
				s.Name != "tools/call x" || s.Kind != "server" || s.StatusCode != "error" {
				t.Errorf("decoded %+v", s)
			}
		})
	}
}

func TestTheReceiverDecodesHistogramPoints(t *testing.T) {
	export, err := proto.Marshal(&collectormetrics.ExportMetricsServiceRequest{ResourceMetrics: []*metricspb.ResourceMetrics{{
		ScopeMetrics: []*metricspb.ScopeMetrics{{Metrics: []*metricspb.Metric{
			{Name: "a.counter", Data: &metricspb.Metric_Sum{Sum: &metricspb.Sum{}}},
			{Name: "mcp.server.operation.duration", Unit: "s", Data: &metricspb.Metric_Histogram{Histogram: &metricspb.Histogram{
				DataPoints: []*metricspb.HistogramDataPoint{{
					Attributes:     []*commonpb.KeyValue{{Key: "mcp.method.name", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: "tools/call"}}}},
					Count:          3,
					ExplicitBounds: []float64{0.01, 0.02},
					Exemplars:      []*metricspb.Exemplar{{TraceId: bytes.Repeat([]byte{1}, 16)}},
				}},
			}}},
		}}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	r := NewReceiver(t)
	resp, err := http.Post(r.Endpoint()+"/v1/metrics", "application/x-protobuf", bytes.NewReader(export))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	h, err := r.WaitForHistogram("mcp.server.operation.duration", nil, waitFor)
	if err != nil {
		t.Fatal(err)
	}
	if h.Unit != "s" || h.Count != 3 || h.Attributes["mcp.method.name"] != "tools/call" || len(h.Bounds) != 2 ||
		len(h.ExemplarTraceIDs) != 1 || h.ExemplarTraceIDs[0] != "01010101010101010101010101010101" {
		t.Errorf("decoded %+v", h)
	}
	if got := r.Histograms(); len(got) != 1 {
		t.Errorf("histograms %+v: the counter is not one", got)
	}
}
