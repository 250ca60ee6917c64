package dashboard

import (
	"reflect"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/variants"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/table"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
)

// SQLPanel is a panel that reads the history store through Grafana's PostgreSQL data source: its
// title and SQL, with Grafana's macro $__timeFilter and the namespace variable in it.
type SQLPanel struct {
	Title, SQL string
}

// SQLPanels are the dashboard's panels from the history store, for tests that run their SQL.
func SQLPanels() []SQLPanel {
	return []SQLPanel{
		{Title: "Schedules: each transport's ratio to the baseline over time (history store)", SQL: trendSQL},
		{Title: "Schedules: results found regressed (history store)", SQL: regressedSQL},
	}
}

// trendSQL is every scheduled benchmark's ratio to its baseline per transport, by completion.
const trendSQL = `SELECT b.completed_at AS "time", b.schedule || ' ' || f.transport AS metric, f.value
FROM tunnelbench_figures f JOIN tunnelbench_benchmarks b ON b.uid = f.benchmark_uid
WHERE $__timeFilter(b.completed_at) AND b.schedule <> '' AND b.namespace ~ '^(${namespace:regex})$' AND f.figure = 'ratio'
ORDER BY 1`

// regressedSQL lists the figures found regressed, newest first.
const regressedSQL = `SELECT b.completed_at AS "time", b.namespace, b.schedule, b.name AS benchmark, f.transport, f.figure, f.value,
  f.low, f.high
FROM tunnelbench_figures f JOIN tunnelbench_benchmarks b ON b.uid = f.benchmark_uid
WHERE $__timeFilter(b.completed_at) AND f.regressed AND b.namespace ~ '^(${namespace:regex})$'
ORDER BY 1 DESC LIMIT 50`

// historySource is the store's PostgreSQL data source, chosen by the history variable.
func historySource() common.DataSourceRef {
	return common.DataSourceRef{Type: cog.ToPtr(postgresType), Uid: cog.ToPtr("${history}")}
}

// postgresType is Grafana's PostgreSQL data source plugin.
const postgresType = "grafana-postgresql-datasource"

// sqlQuery is a query of Grafana's SQL data sources (the SDK has no builder for PostgreSQL's).
type sqlQuery struct {
	RefID      string               `json:"refId"`
	Datasource common.DataSourceRef `json:"datasource"`
	RawSQL     string               `json:"rawSql"`
	Format     string               `json:"format"`
	EditorMode string               `json:"editorMode"`
	RawQuery   bool                 `json:"rawQuery"`
}

func (sqlQuery) ImplementsDataqueryVariant() {}
func (q sqlQuery) Equals(other variants.Dataquery) bool {
	o, ok := other.(sqlQuery)
	return ok && reflect.DeepEqual(q, o)
}
func (sqlQuery) DataqueryType() string { return postgresType }
func (sqlQuery) Validate() error       { return nil }

// sqlTarget builds a sqlQuery.
type sqlTarget struct{ q sqlQuery }

func (b sqlTarget) Build() (variants.Dataquery, error) { return b.q, nil }

func newSQLTarget(sql, format string) sqlTarget {
	return sqlTarget{sqlQuery{RefID: "A", Datasource: historySource(), RawSQL: sql, Format: format, EditorMode: "code", RawQuery: true}}
}

// withHistory adds the store's variable and panels.
func withHistory(b *dashboard.DashboardBuilder) *dashboard.DashboardBuilder {
	b = b.WithVariable(dashboard.NewDatasourceVariableBuilder("history").Label("History store").Type(postgresType)).
		WithRow(dashboard.NewRowBuilder("Schedules (the history store: chart value history.enabled, Grafana's PostgreSQL data source)"))
	panels := SQLPanels()
	b = b.WithPanel(timeseries.NewPanelBuilder().Title(panels[0].Title).Unit("percentunit").Span(24).Height(9).
		Description("Each scheduled benchmark's paired ratio of tps to its baseline, per schedule and transport: a step down " +
			"is the path getting slower relative to the baseline.").
		Datasource(historySource()).LineWidth(2).PointSize(6).WithTarget(newSQLTarget(panels[0].SQL, "time_series")))
	return b.WithPanel(table.NewPanelBuilder().Title(panels[1].Title).Span(24).Height(8).
		Description("Figures judged beyond the 99 % band of their schedule's earlier results, by at least the minimum effect.").
		Datasource(historySource()).WithTarget(newSQLTarget(panels[1].SQL, "table")))
}
