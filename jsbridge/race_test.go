//go:build race

package jsbridge

// raceDetector: this test binary runs under the race detector.
const raceDetector = true
