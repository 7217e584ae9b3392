package main

// The settings that make this process one of several replicas sharing
// their state in Redis (issue 23): where Redis is and the replica's
// name, from the command line, the environment or the configuration
// file, in that order.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"

	"github.com/mcpgate/mcpgate/cluster"
	"github.com/mcpgate/mcpgate/gateway/config"
	"github.com/mcpgate/mcpgate/internal/redact"
)

// Environment variables of the cluster settings.
const (
	envRedis     = "MCPGATE_REDIS_URL"
	envReplicaID = "MCPGATE_REPLICA_ID"
)

// clusterFromEnv gives --redis and --replica-id the environment's values
// where the command line leaves them out, and notes where the Redis URL
// came from, for messages. The flags have no default from the
// environment, so that --help never shows a password.
func (f *serveFlags) clusterFromEnv(cmd *cobra.Command) {
	switch {
	case cmd.Flags().Changed("redis"):
		f.redisFrom = "--redis"
	case os.Getenv(envRedis) != "":
		f.redis, f.redisFrom = os.Getenv(envRedis), envRedis
	}
	if !cmd.Flags().Changed("replica-id") {
		f.replicaID = cmpOr(os.Getenv(envReplicaID), f.replicaID)
	}
}

// openCluster connects this replica to the Redis it was told to share
// state in: --redis, else MCPGATE_REDIS_URL, else cluster.redis in cfg
// (nil for the plain task server); the replica id likewise. It returns
// nil when none is set, and an error naming the setting when Redis does
// not answer: a replica that served without the state it was told to
// share would split what its clients see.
func openCluster(ctx context.Context, f serveFlags, cfg *config.Config) (*cluster.Cluster, error) {
	u, from, replica := f.redis, f.redisFrom, f.replicaID
	if cfg != nil {
		if u == "" && cfg.Cluster.Redis != "" {
			u, from = cfg.Cluster.Redis, "cluster.redis in "+f.config
		}
		replica = cmpOr(replica, cfg.Cluster.ReplicaID)
	}
	if u == "" {
		if replica != "" {
			slog.Warn("mcpgate: a replica id without a Redis to share state in has no effect; set --redis, MCPGATE_REDIS_URL or cluster.redis", "replica", replica)
		}
		return nil, nil
	}
	if from == "" {
		from = "--redis"
	}
	if err := checkRedisURL(u); err != nil {
		return nil, fmt.Errorf("%s: %w", from, err)
	}
	c, err := cluster.Open(ctx, cluster.Options{URL: u, ReplicaID: replica, Logger: slog.Default()})
	if err != nil {
		return nil, fmt.Errorf("%w; mcpgate was told to share state there (%s); start it or remove the setting", err, from)
	}
	return c, nil
}

// checkRedisURL says what is wrong with a Redis URL without quoting it:
// it may hold a password.
func checkRedisURL(s string) error {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return errors.New("not a URL; write redis://host:6379/0")
	case u.Scheme != "redis" && u.Scheme != "rediss":
		return errors.New("a Redis URL starts with redis:// (or rediss:// for TLS), such as redis://host:6379/0")
	case u.Host == "":
		return errors.New("the Redis URL has no host; write redis://host:6379/0")
	}
	if _, err := redis.ParseURL(s); err != nil {
		return fmt.Errorf("the Redis URL: %s", redact.String(err.Error()))
	}
	return nil
}
