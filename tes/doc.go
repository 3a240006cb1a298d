// Package tes implements Trusted-Maximizers Entropy Search (TES).
package tes
