package toolsearch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// OpenAIEmbedder calls an OpenAI-compatible embeddings endpoint (POST
// /v1/embeddings), as OpenAI, Ollama, vLLM, llama.cpp's server and
// Hugging Face's text-embeddings-inference serve it.
type OpenAIEmbedder struct {
	// Endpoint is the API's base URL (http://127.0.0.1:11434/v1) or the
	// embeddings URL itself (.../v1/embeddings); a bare host
	// (http://127.0.0.1:11434) means its /v1.
	Endpoint string
	// Model is the model's name on that server.
	Model string
	// APIKey, when set, is sent as a bearer token.
	APIKey string
	// Dimensions, when above zero, asks models that can shorten their
	// vectors (OpenAI's text-embedding-3) for that many.
	Dimensions int
	// HTTPClient is the client to call with; nil means
	// http.DefaultClient. Calls are bounded by their contexts.
	HTTPClient *http.Client
}

// cacheModel names the vectors this embedder makes, for a cache.
func (e *OpenAIEmbedder) cacheModel() string {
	if e.Dimensions > 0 {
		return fmt.Sprintf("%s/%d", e.Model, e.Dimensions)
	}
	return e.Model
}

// EmbedError is an embeddings endpoint's answer other than success.
type EmbedError struct {
	URL        string // the URL called, without credentials
	StatusCode int
	Status     string
	Message    string // the server's error message, or the start of its body
}

func (e *EmbedError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("embeddings %s: %s", e.URL, e.Status)
	}
	return fmt.Sprintf("embeddings %s: %s: %s", e.URL, e.Status, e.Message)
}

// maxEmbedResponse bounds the response read: 64 vectors of 3,072
// dimensions as JSON are about 4 MB.
const maxEmbedResponse = 256 << 20

// Embed returns the vectors of texts, in order.
func (e *OpenAIEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	u, err := embeddingsURL(e.Endpoint)
	if err != nil {
		return nil, err
	}
	shown := u.Redacted()
	req := struct {
		Model      string   `json:"model"`
		Input      []string `json:"input"`
		Dimensions int      `json:"dimensions,omitzero"`
	}{e.Model, texts, e.Dimensions}
	body, err := jsonv2.Marshal(req)
	if err != nil {
		return nil, err
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	if e.APIKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+e.APIKey)
	}
	client := e.HTTPClient
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(hreq)
	if err != nil {
		// The error names the URL as requested, credentials included.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("embeddings %s: %w", shown, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxEmbedResponse))
	if err != nil {
		return nil, fmt.Errorf("embeddings %s: reading the response: %w", shown, err)
	}
	if resp.StatusCode/100 != 2 {
		msg := errorMessage(data)
		if e.APIKey != "" {
			msg = strings.ReplaceAll(msg, e.APIKey, "[redacted]")
		}
		return nil, &EmbedError{URL: shown, StatusCode: resp.StatusCode, Status: resp.Status, Message: msg}
	}
	var out struct {
		Data []struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		} `json:"data"`
	}
	if err := jsonv2.Unmarshal(data, &out, jsonv2.RejectUnknownMembers(false)); err != nil {
		return nil, fmt.Errorf("embeddings %s: not an embeddings response: %v", shown, err)
	}
	if len(out.Data) != len(texts) {
		return nil, fmt.Errorf("embeddings %s: %d vectors for %d texts", shown, len(out.Data), len(texts))
	}
	vecs := make([][]float32, len(texts))
	for _, d := range out.Data {
		if d.Index < 0 || d.Index >= len(texts) || vecs[d.Index] != nil {
			return nil, fmt.Errorf("embeddings %s: bad or repeated index %d", shown, d.Index)
		}
		if len(d.Embedding) == 0 {
			return nil, fmt.Errorf("embeddings %s: empty vector at index %d", shown, d.Index)
		}
		vecs[d.Index] = d.Embedding
	}
	for _, v := range vecs[1:] {
		if len(v) != len(vecs[0]) {
			return nil, fmt.Errorf("embeddings %s: vectors of %d and %d dimensions in one response", shown, len(vecs[0]), len(v))
		}
	}
	return vecs, nil
}

func embeddingsURL(endpoint string) (*url.URL, error) {
	if endpoint == "" {
		return nil, errors.New("embeddings: no endpoint")
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil, fmt.Errorf("embeddings: endpoint: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("embeddings: endpoint %s: not an http(s) URL", u.Redacted())
	}
	p := strings.TrimRight(u.Path, "/")
	switch {
	case strings.HasSuffix(p, "/embeddings"):
	case p == "":
		p = "/v1/embeddings"
	default:
		p += "/embeddings"
	}
	u.Path, u.RawPath = p, ""
	return u, nil
}

// errorMessage reads the message of an error body as the servers of this
// API write it: {"error": {"message"}} (OpenAI, vLLM), {"error": "..."}
// (Ollama, text-embeddings-inference), {"message"} or {"detail"}; failing
// those, the body's start.
func errorMessage(body []byte) string {
	var e struct {
		Error   jsontext.Value `json:"error"`
		Message string         `json:"message"`
		Detail  jsontext.Value `json:"detail"`
	}
	if jsonv2.Unmarshal(body, &e, jsonv2.RejectUnknownMembers(false)) == nil {
		var s string
		var obj struct {
			Message string `json:"message"`
		}
		switch {
		case jsonv2.Unmarshal(e.Error, &s) == nil && s != "":
			return s
		case jsonv2.Unmarshal(e.Error, &obj, jsonv2.RejectUnknownMembers(false)) == nil && obj.Message != "":
			return obj.Message
		case e.Message != "":
			return e.Message
		case jsonv2.Unmarshal(e.Detail, &s) == nil && s != "":
			return s
		case len(e.Detail) > 0:
			return string(e.Detail)
		}
	}
	s := strings.TrimSpace(string(body))
	if len(s) > 300 {
		s = truncateText(s, 300) + "…"
	}
	return s
}
