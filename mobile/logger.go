package mobile

import (
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
