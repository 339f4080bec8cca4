package main
import (
 _ "github.com/dop251/goja"
 _ "github.com/dop251/goja_nodejs/console"
 _ "github.com/dop251/goja_nodejs/eventloop"
 _ "github.com/go-chi/chi/v5"
 _ "github.com/go-chi/httprate"
 _ "github.com/santhosh-tekuri/jsonschema/v5"
 _ "github.com/evanw/esbuild/pkg/api"
 _ "github.com/modelcontextprotocol/go-sdk/mcp"
 _ "modernc.org/sqlite"
 _ "github.com/jackc/pgx/v5/pgxpool"
 _ "github.com/prometheus/client_golang/prometheus"
 _ "go.yaml.in/yaml/v3"
 _ "github.com/aymanbagabas/go-udiff"
)
func main(){}
