/// The usual traffic by time of the week (`TrafficProfileStore`): one row per road graph,
/// directed road and 15-minute bin. The same SQL creates it in SQLite and in PostgreSQL.
public enum TrafficProfileTable {
  public static let statement = """
    CREATE TABLE traffic_profile (
      graph TEXT NOT NULL, road BIGINT NOT NULL, bin INTEGER NOT NULL, slowdown DOUBLE PRECISION NOT NULL,
      samples INTEGER NOT NULL, PRIMARY KEY (graph, bin, road))
    """
  /// Rows per statement when saving.
  public static let batch = 2000
}
