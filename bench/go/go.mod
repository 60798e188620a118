module arkbench

go 1.19
