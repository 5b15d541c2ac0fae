package mobile

import (
	"context"
	"fmt"
	"log/slog"
	gosync "sync"
)

// Log levels passed to Logger.Log. They are slog's levels, so the gaps leave
// room for finer ones.
const (
	LevelDebug = int64(slog.LevelDebug)
	LevelInfo  = int64(slog.LevelInfo)
	LevelWarn  = int64(slog.LevelWarn)
	LevelError = int64(slog.LevelError)
)

// Logger receives the module's log messages, so they end up in the app's
// own log (Logcat, os_log). It is called from any thread, possibly from
// several at once, and must not block for long.
type Logger interface {
	Log(level int64, message string)
}

var (
	logMu    gosync.RWMutex
	appLog   Logger
	minLevel = LevelInfo
)

// SetLogger routes the module's logs at level and above to l; a nil l
// turns logging off.
func SetLogger(l Logger, level int64) {
	defer recoverLog("SetLogger")
	logMu.Lock()
	defer logMu.Unlock()
	appLog = l
	minLevel = level
}

// logf sends one message to the app's Logger, if any.
func logf(level int64, format string, args ...any) {
	logMu.RLock()
	l, min := appLog, minLevel
	logMu.RUnlock()
	if l == nil || level < min {
		return
	}
	// A panicking app Logger is ignored: logging it would call it again.
	defer func() { _ = recover() }()
	l.Log(level, fmt.Sprintf(format, args...))
}

// slogHandler forwards slog records of the Go packages underneath (the
// replicator) to the app's Logger.
type slogHandler struct {
	attrs []slog.Attr
	group string
}

func (h *slogHandler) Enabled(_ context.Context, lvl slog.Level) bool {
	logMu.RLock()
	defer logMu.RUnlock()
	return appLog != nil && int64(lvl) >= minLevel
}

func (h *slogHandler) Handle(_ context.Context, r slog.Record) error {
	msg := r.Message
	add := func(a slog.Attr) bool {
		key := a.Key
		if h.group != "" {
			key = h.group + "." + key
		}
		msg += " " + key + "=" + a.Value.String()
		return true
	}
	for _, a := range h.attrs {
		add(a)
	}
	r.Attrs(add)
	logf(int64(r.Level), "%s", msg)
	return nil
}

func (h *slogHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &slogHandler{attrs: append(append([]slog.Attr(nil), h.attrs...), attrs...), group: h.group}
}

func (h *slogHandler) WithGroup(name string) slog.Handler {
	g := name
	if h.group != "" {
		g = h.group + "." + name
	}
	return &slogHandler{attrs: h.attrs, group: g}
}

// slogger is the *slog.Logger handed to the Go packages underneath.
var slogger = slog.New(&slogHandler{})
