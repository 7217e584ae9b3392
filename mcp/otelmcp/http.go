package otelmcp

import (
	"net/http"

	"go.opentelemetry.io/otel/propagation"
)

// HTTPHandler returns h with the W3C trace context of each request's
// headers (traceparent, tracestate, baggage) in the request's context,
// where [ServerMiddleware] continues it for a request whose _meta
// carries none.
func HTTPHandler(h http.Handler, opts *Options) http.Handler {
	prop := propagator(optsPropagator(opts))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := prop.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		h.ServeHTTP(w, r.WithContext(ctx))
	})
}

// Transport returns rt (nil means http.DefaultTransport) sending the
// trace context of each request's context as W3C headers, so that an
// HTTP server that reads only headers continues the trace too.
func Transport(rt http.RoundTripper, opts *Options) http.RoundTripper {
	if rt == nil {
		rt = http.DefaultTransport
	}
	return &transport{rt: rt, prop: propagator(optsPropagator(opts))}
}

type transport struct {
	rt   http.RoundTripper
	prop propagation.TextMapPropagator
}

func (t *transport) RoundTrip(r *http.Request) (*http.Response, error) {
	h := propagation.HeaderCarrier{}
	t.prop.Inject(r.Context(), h)
	if len(h) > 0 {
		// A RoundTripper must not change the request it is given.
		r = r.Clone(r.Context())
		for k, v := range h {
			r.Header[k] = v
		}
	}
	return t.rt.RoundTrip(r)
}

func optsPropagator(opts *Options) propagation.TextMapPropagator {
	if opts == nil {
		return nil
	}
	return opts.Propagator
}
