// Package addon keeps the Home Assistant add-on files (config.yaml,
// translations, Dockerfile, rootfs, addon/ assets) consistent with the Go
// code. It holds only tests; they run in make test.
package addon
