package mobile

// Version is the version of the Settee module compiled into the binding.
const Version = "0.1.0-dev"
