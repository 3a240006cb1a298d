// Package arrows holds a test that keeps the module's package imports
// pointing one way (issue 30): the benchmark problems (problems/...) are
// imported by bench and plugins/synthetic and import neither, and no
// plugin reads the host's database or links the host. The rules are a
// table in the test; add one when a new layer appears.
package arrows
