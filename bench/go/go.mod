module arkbench/pool

go 1.19
