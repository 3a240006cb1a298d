// Package attack is tesbo's face-recognition attack objective (the TES
// paper's second real-world workload, §5.3, Figs. 7b and 8), importable so
// that the plugin (plugins/facerec), tests and reproductions share it.
//
// What it measures. An attacker's face is edited with the paper's eight
// "physically realizable" edits (package synth: beard, mustache, forehead
// scar, cheek scar, mole, eyeglasses style, smile; each parameter in [0, 1]).
// A black-box face-recognition system (package frs; by default
// @vladmandic/face-api) turns the edited face into a 128-d descriptor, and
// the objective value is d, the Euclidean distance to the nearest face of a
// gallery (minimized). The attack succeeds when d < θ (default 0.5, the
// paper's): the FRS would then accept the edited attacker as that gallery
// identity. This is security research tooling for measuring how easily an
// FRS is fooled by realizable disguises. It runs only against the attacker
// photo and the gallery the user points it at (by default face-api's own
// demo photos: attacker demo/sample6.jpg, gallery the faces of demo/sample1–5.jpg);
// it fetches nothing and contacts no service.
//
// Outputs. Every evaluation reports the matched identity and d in its
// metadata. Success is decided on full face detection only: in the default
// "landmarks" mode d is computed on the unedited face's landmarks, so
// every new best and every evaluation with d < θ is re-checked with SSD
// detection, and success means that re-detected distance is below θ (both
// distances are reported). The best result is saved as the paper's Fig. 8
// (unedited attacker | synthesized face | matched gallery face) in
// FigureDir/best.png, with best.json beside it (default directory
// out/facerec), each time it improves and at Close (best.json's "final"
// marks that last save); with save_dir set, every synthesized image is
// saved too.
//
// Speed. In the default "landmarks" mode an evaluation renders the edits
// and runs only the recognition network on the unedited face's landmarks
// (fast and deterministic); the re-checks above run full detection, and an
// image in which no face is found there fails the evaluation with
// ErrNoFace.
package attack
