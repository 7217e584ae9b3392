package mcp

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// LoggingLevel is a syslog severity, as MCP log messages use.
type LoggingLevel string

const (
	LevelDebug     LoggingLevel = "debug"
	LevelInfo      LoggingLevel = "info"
	LevelNotice    LoggingLevel = "notice"
	LevelWarning   LoggingLevel = "warning"
	LevelError     LoggingLevel = "error"
	LevelCritical  LoggingLevel = "critical"
	LevelAlert     LoggingLevel = "alert"
	LevelEmergency LoggingLevel = "emergency"
)

var levels = []LoggingLevel{LevelDebug, LevelInfo, LevelNotice, LevelWarning, LevelError, LevelCritical, LevelAlert, LevelEmergency}

// rank orders levels; unknown levels rank 0.
func (l LoggingLevel) rank() int { return slices.Index(levels, l) + 1 }

// LoggingMessageParams are the params of notifications/message.
type LoggingMessageParams struct {
	Level  LoggingLevel `json:"level"`
	Logger string       `json:"logger,omitempty"`
	Data   any          `json:"data"`
	Meta   Meta         `json:"_meta,omitempty"`
}

// SetLevelParams are the params of logging/setLevel.
type SetLevelParams struct {
	Level LoggingLevel `json:"level"`
	Meta  Meta         `json:"_meta,omitempty"`
}

func (s *Server) setLevel(_ context.Context, req *Request) (any, error) {
	var p SetLevelParams
	if err := unmarshalParams(req.RawParams, &p); err != nil {
		return nil, err
	}
	if p.Level.rank() == 0 {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: unknown log level %q; use one of debug, info, notice, warning, error, critical, alert, emergency", truncateString(string(p.Level), 32))
	}
	req.Session.mu.Lock()
	req.Session.logLevel = p.Level
	req.Session.mu.Unlock()
	req.Session.stateChanged()
	return emptyResult{}, nil
}

// LoggingLevel returns the level the client set with logging/setLevel,
// or "" if it has set none.
func (ss *ServerSession) LoggingLevel() LoggingLevel {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.logLevel
}

// ErrLoggingNotDeclared is returned by Log when the server did not declare
// the logging capability (ServerOptions.Logging).
var ErrLoggingNotDeclared = errors.New("mcp: logging capability not declared")

// Log sends a log message to the client unless it is below the level the
// client set with logging/setLevel (before any setLevel, every message is
// sent). From inside a handler, prefer Request.Log, which keeps the
// message with its request.
func (ss *ServerSession) Log(ctx context.Context, level LoggingLevel, logger string, data any) error {
	w := ss.out
	if r := requestFrom(ctx); r != nil && r.Session == ss && !r.done.Load() {
		if r.perRequest != nil {
			return r.Log(level, logger, data)
		}
		w = r.w
	}
	return ss.log(w, level, logger, data)
}

func (ss *ServerSession) log(w MessageWriter, level LoggingLevel, logger string, data any) error {
	if level.rank() == 0 {
		return fmt.Errorf("mcp: unknown log level %q", level)
	}
	ss.mu.Lock()
	declared := ss.caps.Logging != nil
	min := ss.logLevel
	ss.mu.Unlock()
	if !declared {
		return ErrLoggingNotDeclared
	}
	if level.rank() < min.rank() {
		return nil
	}
	return ss.notify(w, notificationMessage, &LoggingMessageParams{Level: level, Logger: logger, Data: data})
}

// Log sends a log message about this request to the client, on the
// request's own stream.
func (r *Request) Log(level LoggingLevel, logger string, data any) error {
	if r.done.Load() {
		return errors.New("mcp: the request is finished")
	}
	if r.perRequest != nil {
		// No session and no logging/setLevel: a 2026-07-28 request gets logs
		// only when it asks, at the level it names, on its own stream.
		if level.rank() == 0 {
			return fmt.Errorf("mcp: unknown log level %q", level)
		}
		if !r.Session.server.opts.Logging {
			return ErrLoggingNotDeclared
		}
		if r.perRequest.logLevel == "" || level.rank() < r.perRequest.logLevel.rank() {
			return nil
		}
		return r.Session.notify(r.w, notificationMessage, &LoggingMessageParams{Level: level, Logger: logger, Data: data})
	}
	return r.Session.log(r.w, level, logger, data)
}

// ErrNoProgressToken is returned by NotifyProgress when the client did not
// ask for progress.
var ErrNoProgressToken = errors.New("mcp: the request has no progress token")

// NotifyProgress reports progress on this request to the client, if the
// client asked for it with a progress token. Progress must increase with
// every call; total and message may be zero. Nothing is sent once the
// request has been answered.
func (r *Request) NotifyProgress(progress, total float64, message string) error {
	tok := r.progressToken()
	if tok == nil {
		return ErrNoProgressToken
	}
	r.progMu.Lock()
	defer r.progMu.Unlock()
	if r.done.Load() {
		return errors.New("mcp: the request is finished")
	}
	if r.progSent && progress <= r.lastProg {
		return fmt.Errorf("mcp: progress must increase (%v after %v)", progress, r.lastProg)
	}
	r.lastProg, r.progSent = progress, true
	p := &ProgressNotificationParams{ProgressToken: tok, Progress: progress, Total: total}
	if r.rev.progressMessage() {
		p.Message = message
	}
	return r.Session.notify(r.w, notificationProgress, p)
}
