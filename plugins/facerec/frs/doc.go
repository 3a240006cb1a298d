// Package frs is the Go side of the black-box face-recognition system (FRS)
// that tesbo's face-attack objective (plugins/facerec) tries to fool.
//
// What it measures: an FRS maps a face image to a 128-d descriptor; two faces
// "match" when the Euclidean distance between their descriptors is below a
// threshold θ (dlib's convention: same person below ~0.6; the TES paper,
// §5.3, uses θ = 0.5). This package computes descriptors and distances to a
// gallery the user supplies. It never looks for faces or galleries on its
// own: it reads only the images, directories and descriptor files it is
// given.
//
// The FRS runs out of process and speaks a line-delimited JSON protocol over
// stdin/stdout (../PROTOCOL.md, version protocolVersion). Two backends speak
// it:
//
//   - the bundled sidecar frs.js in this directory: @vladmandic/face-api
//     (SSD-MobileNetV1 or tiny face detector, 68-point landmarks, a ResNet-34
//     style recognition network) on tfjs's single-threaded WASM backend, or
//     on the pure-JS CPU backend (identical descriptors, ~30× slower). Its
//     npm packages are pinned by package-lock.json; scripts/deps.sh runs
//     `npm ci` here. Nothing is fetched at run time.
//   - "exec:COMMAND": any program the user names that speaks the same
//     protocol (dlib's face_recognition, a commercial API behind a shim, ...).
//
// A Pool runs N such processes (tfjs-wasm is single-threaded, so one per
// core), keeps them warm, restarts one that died, kills one whose request
// timed out, and makes sure none outlives the Go process (Linux: the
// parent-death signal, and Close kills them).
//
// Descriptors are computed from a dlib-style 150×150 face chip aligned by a
// similarity transform from the 68 landmarks (padding 0.25), so the same
// landmarks give the same descriptor however the face was found. Analyze
// finds faces (detector + landmarks + descriptor); Describe takes landmarks
// the caller already has and only runs the recognition network, which is
// what an optimization loop over edits of one face wants (fast and
// deterministic).
package frs
