// Package archrules holds, as a test, the import rules of
// docs/architecture.md, so that the package map stays true as code lands.
package archrules
