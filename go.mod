module github.com/settee/settee

go 1.26.0

// npm's packages (pouchdb-server, PouchDB) hold no Go code: ./... need not
// walk their thousand folders.
ignore ./node_modules

require (
	github.com/fsnotify/fsnotify v1.10.1
	github.com/golang-jwt/jwt/v5 v5.3.1
	github.com/jmoiron/sqlx v1.4.0
	golang.org/x/crypto v0.59.0
	golang.org/x/mobile v0.0.0-20261011034528-197770444867
	golang.org/x/sync v0.24.0
	modernc.org/libc v1.79.0
	modernc.org/quickjs v0.27.0
	modernc.org/sqlite v1.61.1
)

require (
	github.com/dustin/go-humanize v1.1.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/mattn/go-isatty v0.0.24 // indirect
	github.com/ncruces/go-strftime v1.1.0 // indirect
	github.com/remyoudompheng/bigfft v0.0.0-20230129092748-24d4a6f8daec // indirect
	golang.org/x/sys v0.50.0 // indirect
	modernc.org/libquickjs v0.14.0 // indirect
	modernc.org/mathutil v1.7.1 // indirect
	modernc.org/memory v1.12.1 // indirect
)
