module example.com/tabletheoryd-examples

go 1.23

require github.com/theory-cloud/tabletheoryd/clients/go v0.0.0

replace github.com/theory-cloud/tabletheoryd/clients/go => ../../clients/go
