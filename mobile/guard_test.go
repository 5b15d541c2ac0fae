package mobile

import (
	"strings"
	gosync "sync"
	"testing"
)

type recLogger struct {
	mu    gosync.Mutex
	lines []string
}

func (l *recLogger) Log(level int64, message string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, message)
}

func (l *recLogger) all() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

func useLogger(t *testing.T, level int64) *recLogger {
	t.Helper()
	l := &recLogger{}
	SetLogger(l, level)
	t.Cleanup(func() { SetLogger(nil, LevelInfo) })
	return l
}

func panicky() (err error) {
	defer recoverTo(&err)
	var m map[string]int
	//lint:ignore SA5000 the point: a panic for recoverTo to turn into an error
	m["x"] = 1
	return nil
}

func TestRecoverToTurnsPanicIntoError(t *testing.T) {
	l := useLogger(t, LevelError)
	err := panicky()
	if err == nil || !strings.Contains(err.Error(), "nil map") {
		t.Fatalf("err = %v, want the panic as an error", err)
	}
	if !strings.Contains(l.all(), "panic recovered") {
		t.Fatalf("the panic was not logged: %q", l.all())
	}
}

type panicLogger struct{}

func (panicLogger) Log(int64, string) { panic("app logger broke") }

func TestPanickingLoggerDoesNotCrash(t *testing.T) {
	SetLogger(panicLogger{}, LevelDebug)
	defer SetLogger(nil, LevelInfo)
	logf(LevelInfo, "hello") // must not panic
}

func TestLogLevelFilter(t *testing.T) {
	l := useLogger(t, LevelWarn)
	logf(LevelInfo, "quiet")
	logf(LevelWarn, "loud %d", 1)
	got := l.all()
	if strings.Contains(got, "quiet") {
		t.Errorf("messages below the level were logged: %q", got)
	}
	if !strings.Contains(got, "loud 1") {
		t.Errorf("missing messages: %q", got)
	}
}
