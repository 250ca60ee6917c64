package benchmark

// These tests read the transport registry: every transport type is linked, as in the operator.
import _ "github.com/tunnelbench/tunnelbench/internal/transport/transports"
