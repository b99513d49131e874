package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"time"
)

type Config struct {
	APIKey    string        `json:"api_key" env:"API_KEY"`
	Token     string        `json:"token"`
	Password  string        `json:"password,omitempty"`
	SecretRef string        `json:"secret_ref"`
	Timeout   time.Duration `json:"timeout"`
}

func loadConfig() Config {
	return Config{
		APIKey:    os.Getenv("API_KEY"),
		Token:     os.Getenv("SERVICE_TOKEN"),
		Password:  os.Getenv("DB_PASSWORD"),
		SecretRef: "projects/demo/secrets/api-key/versions/latest",
		Timeout:   30 * time.Second,
	}
}

func sign(payload []byte, key []byte) string {
	sum := sha256.Sum256(append(key, payload...))
	return hex.EncodeToString(sum[:])
}

func handler(cfg Config) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		if auth != "Bearer "+cfg.Token {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		token := r.URL.Query().Get("token")
		fmt.Fprintf(w, "ok %d\n", len(token))
	}
}

func main() {
	cfg := loadConfig()
	apiKey := cfg.APIKey
	if apiKey == "" {
		fmt.Fprintln(os.Stderr, "API_KEY is not set")
		os.Exit(1)
	}
	http.Handle("/", handler(cfg))
	_ = http.ListenAndServe(":8080", nil)
}
