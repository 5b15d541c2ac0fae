// Module tools pins the gomobile tool chain at the golang.org/x/mobile
// version the library builds against. It is a module of its own so that
// gobind's requirements (golang.org/x/tools, x/mod) are none of what an app
// importing github.com/settee/settee pulls. scripts/mobile-check builds
// gobind from here and checks the two versions agree.
module github.com/settee/settee/tools

go 1.26.0

tool (
	golang.org/x/mobile/cmd/gobind
	golang.org/x/mobile/cmd/gomobile
)

require (
	golang.org/x/mobile v0.0.0-20261011034528-197770444867 // indirect
	golang.org/x/mod v0.42.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/tools v0.52.0 // indirect
)
